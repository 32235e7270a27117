"""A kernel source: a file or text, its language, and the headers it includes."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from kerncast._errors import InputError
from kerncast.core import LANGUAGES, language_of_suffix

__all__ = ["Source", "language_of", "read_source"]

_ALIASES = {"cuda": "cuda", "cu": "cuda", "cuda c++": "cuda", "opencl": "opencl", "cl": "opencl",
            "opencl c": "opencl", "ptx": "ptx"}
_EXT = {name: suffixes[0] for name, suffixes in LANGUAGES.items()}
_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


@dataclass(frozen=True)
class Source:
    """Source text with the name the user knows it by.

    ``path`` is the file on disk (``None`` for text given directly); ``display`` is
    the name used in messages (the path as given, or ``<source>``).
    """

    text: str
    language: str
    display: str
    path: Path | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    def on_disk(self, tmp: Path, suffix: str | None = None) -> tuple[Path, dict[str, str]]:
        """A file holding the source (the user's own, or a copy in ``tmp``), and the
        replacements that turn its path back into :attr:`display` in messages."""
        if self.path is not None:
            return self.path, {str(self.path): self.display}
        path = tmp / f"source{suffix or _EXT[self.language]}"
        path.write_text(self.text)
        return path, {str(path): self.display}

    def include_digests(self, include_dirs: list[Path]) -> dict[str, str]:
        """SHA-256 of every ``#include "..."`` file found (recursively), by name, so
        that a cache entry goes stale when a local header changes."""
        roots = ([self.path.parent] if self.path else []) + list(include_dirs)
        found: dict[str, str] = {}
        pending = [(self.text, roots)]
        while pending and len(found) < 256:
            text, dirs = pending.pop()
            for name in _INCLUDE.findall(text):
                hit = next((d / name for d in dirs if (d / name).is_file()), None)
                if hit is None or str(hit) in found:
                    continue
                body = hit.read_bytes()
                found[str(hit)] = hashlib.sha256(body).hexdigest()
                pending.append((body.decode(errors="replace"), [hit.parent, *dirs]))
        return found


def language_of(lang: str | None, path: Path | None) -> str:
    """The language named by ``lang``, else by the file's suffix."""
    if lang is not None:
        key = str(lang).strip().lower()
        if key not in _ALIASES:
            raise InputError(f"unknown language {lang!r}; choose one of cuda, opencl, ptx")
        return _ALIASES[key]
    if path is not None and language_of_suffix(path.suffix) is not None:
        return language_of_suffix(path.suffix)
    if path is not None:
        raise InputError(f"cannot tell the language of {path} from its suffix; name it .cu, "
                         f".cl or .ptx, or pass lang='cuda', 'opencl' or 'ptx' (--lang)")
    raise InputError("source text needs its language: pass lang='cuda', 'opencl' or 'ptx'")


def _looks_like_text(source: str) -> bool:
    if "\n" in source or len(source) > 4096:
        return True
    try:
        if Path(source).expanduser().is_file():
            return False
    except OSError:  # e.g. a name too long for the file system: not a path
        return True
    return "{" in source or "(" in source or ";" in source


def read_source(source: str | os.PathLike, lang: str | None, name: str | None = None) -> Source:
    """A :class:`Source` from a path or from source text (text needs ``lang``)."""
    if isinstance(source, str) and not source.strip():
        raise InputError("the source is empty; give a .cu, .cl or .ptx file, or the source "
                         "text with lang=")
    if lang is not None:
        language_of(lang, None)  # an unknown language is named before the source is looked for
    if isinstance(source, str) and _looks_like_text(source):
        language = language_of(lang, None)
        return Source(text=source, language=language, display=name or "<source>")
    path = Path(source).expanduser()
    if path.is_dir():
        raise InputError(f"{source} is a directory; name the .cu, .cl or .ptx file in it")
    if not path.is_file():
        raise InputError(f"no such file: {source}; give a .cu, .cl or .ptx file, or source "
                         f"text with lang=")
    language = language_of(lang, path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {source} ({exc}); give a readable text file") from None
    return Source(text=text, language=language, display=name or str(source), path=path.resolve())

"""The whole corpus: every application directory under ``corpus/kernels``."""

from __future__ import annotations

import difflib
import re
import tomllib
from functools import lru_cache
from pathlib import Path

from kerncast._errors import InputError
from kerncast.corpus._spec import Application, CorpusKernel, load_application

__all__ = ["KERNEL_DIR", "get_kernel", "is_corpus_ref", "list_applications", "list_kernels"]

KERNEL_DIR = Path(__file__).with_name("kernels")
PREFIX = "corpus:"


def _whole_space(root: Path) -> bool:
    # The shipped corpus's launch spaces (4,000 configurations) are checked by its tests,
    # not at every start; a corpus of the user's own is checked whole.
    return root.resolve() != KERNEL_DIR.resolve()


def _directories(root: Path) -> list[Path]:
    return [d for d in sorted(root.iterdir()) if d.is_dir() and (d / "spec.toml").exists()]


@lru_cache(maxsize=None)
def _application(directory: Path, whole_space: bool) -> Application:
    return load_application(directory, whole_space=whole_space)


@lru_cache(maxsize=4)
def _load(root: Path) -> tuple[Application, ...]:
    apps = tuple(_application(d, _whole_space(root)) for d in _directories(root))
    seen: dict[str, str] = {}
    for app in apps:
        for kernel in app.kernels:
            if kernel.name in seen:
                raise InputError(f"corpus kernel name {kernel.name!r} is used by both "
                                 f"{seen[kernel.name]} and {app.name}; names must be unique")
            seen[kernel.name] = app.name
    return apps


#: A ``[[kernels]]`` header and the lines of its own keys (up to the next table header),
#: and a ``name`` among them: what a spec's kernel names are read from without parsing it.
_KERNEL_BLOCK = re.compile(r"^\[\[kernels\]\][ \t]*(?:#.*)?\n((?:(?!\[).*\n?)*)", re.M)
_NAME = re.compile(r"""^name[ \t]*=[ \t]*(?:"([^"\\\n]*)"|'([^'\n]*)')[ \t]*(?:#.*)?$""", re.M)


def _kernel_names(text: str) -> list[str]:
    """The kernel names of a spec's text: read from each ``[[kernels]]`` block's ``name``
    line (2 ms for the shipped corpus where parsing every spec took 37 ms, paid by every
    ``predict`` process), or from the parsed TOML where a block has no such line."""
    blocks = _KERNEL_BLOCK.findall(text)
    found = [_NAME.search(block) for block in blocks]
    if len(blocks) == text.count("[[kernels]]") and all(found):
        return [m.group(1) if m.group(1) is not None else m.group(2)
                for m in found if m is not None]
    return [str(k["name"]) for k in tomllib.loads(text).get("kernels", [])]


@lru_cache(maxsize=4)
def _where(root: Path) -> dict[str, Path]:
    """Kernel name -> its application's directory, from the TOML files alone, so that
    finding one kernel validates only its own application. A name used twice, or a file
    that is not TOML, loads the whole corpus, which says what is wrong."""
    where: dict[str, Path] = {}
    for directory in _directories(root):
        try:
            names = _kernel_names((directory / "spec.toml").read_text())
        except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError):
            _load(root)
            raise
        for name in names:
            if name in where:
                _load(root)
            where[name] = directory
    return where


def list_applications(root: Path | None = None) -> list[Application]:
    """Every application of the corpus (validated)."""
    return list(_load(root or KERNEL_DIR))


def list_kernels(root: Path | None = None) -> list[CorpusKernel]:
    """Every kernel of the corpus, in application order."""
    return [k for app in list_applications(root) for k in app.kernels]


def is_corpus_ref(text: str) -> bool:
    return str(text).startswith(PREFIX)


def get_kernel(name: str, root: Path | None = None) -> CorpusKernel:
    """A corpus kernel by name; ``corpus:`` in front of the name is accepted.

    Raises
    ------
    InputError
        For an unknown name, listing the closest ones.
    """
    key = name[len(PREFIX):] if is_corpus_ref(name) else name
    root = root or KERNEL_DIR
    where = _where(root)
    if key in where:
        app = _application(where[key], _whole_space(root))
        return next(k for k in app.kernels if k.name == key)
    close = difflib.get_close_matches(key, list(where), n=4, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise InputError(f"no corpus kernel {key!r}; {hint}'kerncast corpus list' shows them all")

"""A kernel as a user has it: its source (text, a file, or PTX), its entry, how to compile it."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kerncast._errors import InputError

__all__ = ["COMPILERS", "LANGUAGES", "Kernel", "language_of_suffix"]

#: the languages a kernel may be written in, with their file suffixes (the frontend
#: registers how to compile each: kerncast.frontend._languages)
LANGUAGES = {"cuda": (".cu", ".cuh"), "opencl": (".cl",), "ptx": (".ptx",)}
#: compilers by language; "auto" picks NVRTC (else nvcc) for CUDA, clang for OpenCL
COMPILERS = {"cuda": ("auto", "nvrtc", "nvcc"), "opencl": ("auto", "clang", "nvidia-opencl"),
             "ptx": ("auto",)}
_ARCH = re.compile(r"^(?:-arch|--gpu-architecture)(?:=|$)(.*)")
_SUFFIX = {suffix: name for name, suffixes in LANGUAGES.items() for suffix in suffixes}


def language_of_suffix(suffix: str) -> str | None:
    """The language a file suffix (``.cu``) names, or None."""
    return _SUFFIX.get(suffix.lower())


def _looks_like_path(text: str) -> bool:
    return "\n" not in text and len(text) < 4096 and Path(text).suffix in (*_SUFFIX, ".cubin")


@dataclass(frozen=True)
class Kernel:
    """A kernel: ``name`` (its entry, as written in the source), the source as ``text`` or
    ``path``, its ``language``, the ``compiler`` and its ``options`` and ``defines``.

    ``Kernel.of(name, source)`` takes the source as Kernel Tuner does: a file name or
    the source text.
    """

    name: str
    text: str | None = None
    path: Path | None = None
    language: str = "cuda"
    compiler: str = "auto"
    options: tuple[str, ...] = ()
    defines: Mapping[str, Any] = field(default_factory=dict)
    include_dirs: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise InputError("a kernel needs the name of its entry function, e.g. 'saxpy'")
        if (self.text is None) == (self.path is None):
            raise InputError(f"kernel {self.name}: give its source as text or as a file, "
                             "not both and not neither")
        if self.path is not None:
            path = Path(self.path).expanduser()
            if path.suffix == ".cubin":
                raise InputError(f"{path} is a cubin, which holds machine code but no PTX; "
                                 "kerncast emulates PTX: give the .cu source or a .ptx "
                                 "(nvcc -ptx, or cuobjdump -ptx of a fatbin)")
            if not path.is_file():
                raise InputError(f"no such file: {path}" + (
                    " (a directory; name the source file in it)" if path.is_dir() else ""))
            object.__setattr__(self, "path", path)
        if self.language not in LANGUAGES:
            raise InputError(f"language {self.language!r} is not one of {', '.join(LANGUAGES)}")
        if self.compiler not in COMPILERS[self.language]:
            raise InputError(f"compiler {self.compiler!r} does not compile {self.language}; "
                             f"choose one of {', '.join(COMPILERS[self.language])}")
        options = shlex.split(self.options) if isinstance(self.options, str) else self.options
        object.__setattr__(self, "options", tuple(str(o) for o in options))
        object.__setattr__(self, "defines", dict(self.defines))
        object.__setattr__(self, "include_dirs",
                           tuple(Path(p).expanduser() for p in self.include_dirs))

    @classmethod
    def of(cls, name: str, source: str | Path, *, language: str | None = None,
           **options: Any) -> Kernel:
        """``source`` is a file name (``.cu``, ``.cl``, ``.ptx``) or the source text."""
        if isinstance(source, Path) or (isinstance(source, str) and _looks_like_path(source)):
            path = Path(source)
            lang = language or language_of_suffix(path.suffix)
            if lang is None:
                raise InputError(f"cannot tell the language of {path} from its suffix; pass "
                                 f"language= ({', '.join(LANGUAGES)})")
            return cls(name, path=path, language=lang, **options)
        if not isinstance(source, str) or not source.strip():
            raise InputError(f"kernel {name}: the source is empty; give the source text or a "
                             "file name")
        lang = language or ("ptx" if ".entry" in source and ".target" in source else "cuda")
        return cls(name, text=source, language=lang, **options)

    @property
    def display(self) -> str:
        """The source's name in messages."""
        return str(self.path) if self.path is not None else f"<{self.name} source>"

    @property
    def source(self) -> str:
        """The source text."""
        if self.text is not None:
            return self.text
        assert self.path is not None
        return self.path.read_text()

    def with_defines(self, defines: Mapping[str, Any]) -> Kernel:
        """The same kernel with more macros (these win)."""
        return replace(self, defines={**self.defines, **defines})

    def ptxas_options(self) -> tuple[str, ...]:
        """The options the user passed for the assembler (``-maxrregcount=N``,
        ``-Xptxas ...``), as ptxas takes them."""
        out: list[str] = []
        opts = list(self.options)
        for i, opt in enumerate(opts):
            if opt.lstrip("-").startswith("maxrregcount"):
                value = opt.split("=", 1)[1] if "=" in opt else (
                    opts[i + 1] if i + 1 < len(opts) else "")
                out.append(f"--maxrregcount={value}")
            elif opt == "-Xptxas" and i + 1 < len(opts):
                out += opts[i + 1].split(",")
        return tuple(out)

    def compile_options(self) -> tuple[str, ...]:
        """The options for the front end: the user's, less the target (kerncast compiles for
        the device it predicts) and what only ptxas takes."""
        out: list[str] = []
        skip = False
        for opt in self.options:
            if skip:
                skip = False
            elif opt.lstrip("-").startswith("maxrregcount") or _ARCH.match(opt):
                skip = "=" not in opt  # its value, where it is the next option
            elif opt == "-Xptxas":
                skip = True
            else:
                out.append(opt)
        return tuple(out)

    def target_arch(self) -> str | None:
        """The target the user's options name (``sm_90``, from ``-arch=sm_90`` or ``-arch
        sm_90``), or None."""
        opts = list(self.options)
        for i, opt in enumerate(opts):
            match = _ARCH.match(opt)
            if match:
                value = match.group(1) or (opts[i + 1] if i + 1 < len(opts) else "")
                return value.replace("compute_", "sm_") or None
        return None

"""The one registry of languages the frontend compiles to PTX.

The languages themselves, their file suffixes and the compilers a user may name are
declared once in :mod:`kerncast.core` (``LANGUAGES``, ``COMPILERS``); here each gets how
to pick its compiler and how to build PTX with it. PTX is taken as it is (no compiler).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kerncast._errors import InputError
from kerncast.core import COMPILERS, LANGUAGES
from kerncast.frontend._cuda import compile_cuda, select_cuda
from kerncast.frontend._opencl import compile_opencl, select_opencl
from kerncast.frontend._source import Source
from kerncast.frontend._toolchain import Tool

__all__ = ["FRONTENDS", "Frontend", "frontend_of", "register_frontend"]

Build = Callable[[Tool, Source, str, list[str], list[str]], tuple[str, list[str]]]


@dataclass(frozen=True)
class Frontend:
    """How one language becomes PTX: ``select(toolchain)`` picks the compiler and
    ``build(tool, source, arch, flags, options)`` returns (PTX, notes); both None for a
    language that is PTX already."""

    language: str
    select: Callable[[str], Tool] | None
    build: Build | None

    def compiler(self, toolchain: str) -> Tool:
        """The compiler ``toolchain`` names (one of the language's in ``COMPILERS``)."""
        allowed = COMPILERS[self.language]
        if toolchain not in allowed or self.select is None:
            raise InputError(f"toolchain {toolchain!r} does not compile {self.language}; "
                             f"choose one of {', '.join(allowed)}")
        return self.select(toolchain)


FRONTENDS: dict[str, Frontend] = {}


def register_frontend(frontend: Frontend) -> None:
    """Add how to compile one of the languages :mod:`kerncast.core` declares."""
    if frontend.language not in LANGUAGES:
        raise TypeError(f"{frontend.language!r} is not a language kerncast.core declares "
                        f"({', '.join(LANGUAGES)})")
    FRONTENDS[frontend.language] = frontend


def frontend_of(language: str) -> Frontend:
    """The frontend of ``language``, or an error naming the ones there are."""
    found = FRONTENDS.get(language)
    if found is None:
        raise InputError(f"no frontend compiles {language!r}; the languages are "
                         f"{', '.join(FRONTENDS)}")
    return found


def _cuda(tool: Tool, source: Source, arch: str, flags: list[str],
          options: list[str]) -> tuple[str, list[str]]:
    return compile_cuda(tool, source, arch, flags, options), []


register_frontend(Frontend("cuda", select_cuda, _cuda))
register_frontend(Frontend("opencl", select_opencl, compile_opencl))
register_frontend(Frontend("ptx", None, None))

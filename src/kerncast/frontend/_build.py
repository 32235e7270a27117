"""A :class:`kerncast.core.Kernel` compiled as its user builds it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kerncast.core import Kernel
from kerncast.frontend._compile import compile as compile_source
from kerncast.frontend._unit import TranslationUnit

__all__ = ["build"]

def build(kernel: Kernel, arch: str | None = None,
          defines: Mapping[str, Any] | None = None) -> TranslationUnit:
    """Compile ``kernel`` for ``arch`` (a target or a device name) with its compiler, options
    and defines (``defines`` added last); the unit's resources run ptxas with the
    user's assembler options."""
    source = kernel.path if kernel.path is not None else kernel.text
    assert source is not None
    macros = {**kernel.defines, **(defines or {})}
    if kernel.language == "ptx":
        return compile_source(source, lang="ptx", arch=arch, name=kernel.display,
                              ptxas_options=kernel.ptxas_options())
    return compile_source(source, lang=kernel.language, arch=arch, defines=macros,
                          options=list(kernel.compile_options()), toolchain=kernel.compiler,
                          include_dirs=kernel.include_dirs, name=kernel.display,
                          ptxas_options=kernel.ptxas_options())

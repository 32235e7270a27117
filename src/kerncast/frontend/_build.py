"""A :class:`kerncast.core.Kernel` compiled as its user builds it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kerncast.core import Kernel
from kerncast.frontend._compile import compile as compile_source
from kerncast.frontend._unit import TranslationUnit

__all__ = ["build", "front_options", "user_arch"]

_ARCH = re.compile(r"^(?:-arch|--gpu-architecture)(?:=|$)(.*)")


def user_arch(kernel: Kernel) -> str | None:
    """The ``-arch`` the user's options name (``sm_90``, from ``-arch=sm_90`` or
    ``-arch sm_90``), or None."""
    opts = list(kernel.options)
    for i, opt in enumerate(opts):
        match = _ARCH.match(opt)
        if match:
            value = match.group(1) or (opts[i + 1] if i + 1 < len(opts) else "")
            return value.replace("compute_", "sm_") or None
    return None


def front_options(kernel: Kernel) -> list[str]:
    """The user's options for the front end, without the target (kerncast compiles for
    the device it predicts) and without what only ptxas takes."""
    out, skip = [], False
    for opt in kernel.compile_options():
        if skip:
            skip = False
            continue
        if _ARCH.match(opt):
            skip = "=" not in opt
            continue
        out.append(opt)
    return out


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
                          options=front_options(kernel), toolchain=kernel.compiler,
                          include_dirs=kernel.include_dirs, name=kernel.display,
                          ptxas_options=kernel.ptxas_options())

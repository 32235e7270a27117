"""A user's own kernel, described in Kernel Tuner's vocabulary, as a (Kernel, Launch).

``kerncast.predict`` and ``kerncast.sweep`` take the arguments of Kernel Tuner's
``tune_kernel``: ``kernel_name``, ``kernel_source`` (a file name or the source text),
``problem_size``, ``arguments`` (NumPy arrays and scalars, or kerncast's descriptions),
and the tunable parameters with ``restrictions``, ``grid_div_x/y/z``,
``block_size_names``, ``smem_args``, ``cmem_args``, ``compiler_options``, ``defines``
and ``lang``. This module turns them into the :mod:`kerncast.core` types once; nothing
after it looks a name up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kerncast._errors import InputError
from kerncast.core._expr import evaluate
from kerncast.core._kernel import Kernel
from kerncast.core._launch import Launch
from kerncast.core._launchfile import user_launch
from kerncast.core._tuning import Tuning

__all__ = ["UserKernel", "language_of"]

_LANGS = {"cuda": "cuda", "opencl": "opencl", "ptx": "ptx"}


def language_of(lang: str | None) -> str | None:
    """Kernel Tuner's ``lang`` (``"CUDA"``, ``"OpenCL"``, ...) as kerncast's language."""
    if lang is None:
        return None
    found = _LANGS.get(str(lang).lower())
    if found is None:
        raise InputError(f"lang={lang!r}: kerncast predicts CUDA, OpenCL and PTX kernels; "
                         "C, Fortran and HIP kernels it cannot compile to PTX")
    return found


@dataclass(frozen=True)
class UserKernel:
    """A kernel, its problem and its tuning, as Kernel Tuner's ``tune_kernel`` takes them."""

    kernel: Kernel
    tuning: Tuning
    arguments: Any
    smem_args: Mapping[str, Any] = field(default_factory=dict)
    cmem_args: Mapping[str, Any] = field(default_factory=dict)
    grid: Any = None
    block: Any = None
    seed: int = 0

    @classmethod
    def of(cls, kernel_name: str, kernel_source: Any, problem_size: Any = None,
           arguments: Sequence[Any] | Mapping[str, Any] | None = None,
           tune_params: Mapping[str, Any] | None = None, *, restrictions: Any = None,
           grid_div_x: Any = None, grid_div_y: Any = None, grid_div_z: Any = None,
           block_size_names: Sequence[str] | None = None, smem_args: Mapping | None = None,
           cmem_args: Mapping | None = None, texmem_args: Mapping | None = None,
           compiler: str | None = None, compiler_options: Any = None,
           defines: Mapping[str, Any] | None = None, lang: str | None = None,
           include_dirs: Sequence[str] = (), grid: Any = None, block: Any = None,
           seed: int = 0) -> UserKernel:
        """Check and hold Kernel Tuner's arguments (see the module)."""
        if texmem_args:
            raise InputError("texmem_args: kerncast does not emulate texture memory; pass "
                             "those arrays as ordinary arguments")
        if arguments is None:
            raise InputError(f"kernel {kernel_name}: give its arguments, a list in the order "
                             "of its parameters (NumPy arrays and scalars, or kerncast.Array "
                             "descriptions)")
        if problem_size is None and grid is None:
            raise InputError(f"kernel {kernel_name}: give problem_size (the grid is derived "
                             "from it as Kernel Tuner does) or grid=")
        kernel = Kernel.of(kernel_name, kernel_source, language=language_of(lang),
                           compiler=compiler or "auto", options=compiler_options or (),
                           defines=defines or {}, include_dirs=tuple(include_dirs))
        tuning = Tuning.of(problem_size, tune_params, restrictions=restrictions,
                           grid_div_x=grid_div_x, grid_div_y=grid_div_y, grid_div_z=grid_div_z,
                           block_size_names=block_size_names)
        return cls(kernel, tuning, arguments, dict(smem_args or {}), dict(cmem_args or {}),
                   grid, block, seed)

    def configs(self) -> list[dict[str, Any]]:
        """Every configuration of the tunable parameters the restrictions allow."""
        return self.tuning.configs() if self.tuning.tune_params else [{}]

    def instance(self, params: Mapping[str, Any] | None = None) -> tuple[Kernel, Launch]:
        """The kernel as compiled with ``params`` and its launch."""
        params = dict(params or {})
        shared = self.smem_args.get("size", 0)
        if isinstance(shared, str):
            shared = evaluate(shared, params)
        elif callable(shared):
            shared = shared(params)
        return user_launch(self.kernel, self.tuning, params, self.arguments, grid=self.grid,
                           block=self.block, dynamic_shared=int(shared), seed=self.seed,
                           constants=self.cmem_args)

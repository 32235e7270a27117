"""Checks a corpus kernel's spec against its files and its own launch space."""

from __future__ import annotations

import re
from pathlib import Path

from kerncast._errors import InputError
from kerncast.core import evaluate
from kerncast.corpus._spec import SIZE_NAMES, CorpusKernel, LaunchConfig

__all__ = ["validate_kernel"]

MAX_THREADS_PER_BLOCK = 1024


def _where(kernel: CorpusKernel, field: str) -> str:
    return f"kernels[{kernel.index}] ({kernel.name}).{field}"


def validate_kernel(kernel: CorpusKernel, path: Path, *, whole_space: bool = True) -> None:
    """Raise :class:`InputError` naming the file and field of the first problem found;
    ``whole_space`` checks every launch configuration of every size as well."""
    try:
        _check_sizes(kernel)
        _check_args(kernel)
        _check_tunables(kernel)
        _check_files(kernel)
        if whole_space:
            _check_launch_space(kernel)
    except _SpecProblem as problem:
        raise InputError(f"corpus spec {path}: {_where(kernel, problem.field)}: {problem}") from None
    except InputError as exc:  # an expression that does not evaluate
        raise InputError(f"corpus spec {path}: {_where(kernel, 'expressions')}: {exc}") from None


class _SpecProblem(Exception):
    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def _check_sizes(kernel: CorpusKernel) -> None:
    missing = [s for s in SIZE_NAMES if s not in kernel.spec.sizes]
    if missing:
        raise _SpecProblem("sizes", f"missing size(s) {', '.join(missing)}; every kernel has "
                           f"{', '.join(SIZE_NAMES)}")


def _check_args(kernel: CorpusKernel) -> None:
    names = [a.name for a in kernel.spec.args]
    if len(set(names)) != len(names):
        raise _SpecProblem("args", "argument names repeat")
    for i, arg in enumerate(kernel.spec.args):
        if arg.kind == "buffer" and (arg.shape is None or arg.intent is None):
            raise _SpecProblem(f"args[{i}] ({arg.name})", "a buffer needs shape and intent")
        if arg.kind == "scalar" and arg.value is None:
            raise _SpecProblem(f"args[{i}] ({arg.name})", "a scalar needs a value expression")
    outputs = {a.name for a in kernel.spec.args if a.kind == "buffer" and a.intent != "in"}
    for out in kernel.spec.check.outputs:
        if out not in outputs:
            raise _SpecProblem("check.outputs", f"{out!r} is not an out or inout buffer "
                               f"(those are: {', '.join(sorted(outputs)) or 'none'})")


def _check_tunables(kernel: CorpusKernel) -> None:
    spec = kernel.spec
    for name, values in spec.tunables.items():
        if not values:
            raise _SpecProblem(f"tunables.{name}", "lists no values")
        if name not in spec.defaults:
            raise _SpecProblem("defaults", f"tunable {name!r} has no default")
    for name, value in spec.defaults.items():
        if name not in spec.tunables:
            raise _SpecProblem(f"defaults.{name}", "is not a declared tunable")
        if value not in spec.tunables[name]:
            raise _SpecProblem(f"defaults.{name}", f"value {value} is outside its declared "
                               f"set {spec.tunables[name]}")
    if not kernel.tunable_space():
        raise _SpecProblem("restrictions", "exclude every tunable combination")
    if spec.defaults not in kernel.tunable_space():
        raise _SpecProblem("defaults", "the default combination breaks the restrictions")


def _check_files(kernel: CorpusKernel) -> None:
    for lang in kernel.spec.languages:
        src = kernel.source_path(lang)
        if not src.exists():
            raise _SpecProblem("languages", f"{lang} source {src.name} does not exist")
        if not re.search(rf"\b{re.escape(kernel.entry)}\s*\(", src.read_text()):
            raise _SpecProblem("entry", f"{kernel.entry!r} is not defined in {src.name}")
    if not kernel.c_path.exists():
        raise _SpecProblem("roi", f"the C version {kernel.c_path.name} does not exist")
    module = kernel.app.directory / f"{kernel.app.name}.py"
    if not module.exists():
        raise _SpecProblem("args", f"the generator and reference module {module.name} "
                           "does not exist")


def _check_launch_space(kernel: CorpusKernel) -> None:
    for size in kernel.spec.sizes:
        for tunables in kernel.tunable_space():
            config = kernel.launch(size, tunables)
            _check_config(kernel, config)


def _check_config(kernel: CorpusKernel, config: LaunchConfig) -> None:
    at = f"at size {config.size!r} with {config.label()}"
    if any(d <= 0 for d in (*config.grid, *config.block)):
        raise _SpecProblem("launch", f"grid {config.grid} or block {config.block} has a "
                           f"non-positive dimension {at}")
    if len(config.grid) != len(config.block):
        raise _SpecProblem("launch", "grid and block have different numbers of dimensions")
    if config.threads_per_block > MAX_THREADS_PER_BLOCK:
        raise _SpecProblem("launch.block", f"{config.threads_per_block} threads per block "
                           f"{at}; at most {MAX_THREADS_PER_BLOCK} (add a restriction)")
    if config.dynamic_shared < 0:
        raise _SpecProblem("launch.dynamic_shared", f"is negative {at}")
    covers = kernel.spec.launch.covers
    if covers is not None:
        env = kernel.arg_env(config)
        need = [int(evaluate(c, env)) for c in covers]
        have = [g * b for g, b in zip(config.grid, config.block)]
        if len(need) != len(have) or any(h < n for h, n in zip(have, need)):
            raise _SpecProblem(
                "launch.grid",
                f"the grid covers {' x '.join(map(str, have))} threads {at}, but the kernel "
                f"needs {' x '.join(map(str, need))} (launch.covers); fix the grid formula",
            )
    for i, arg in enumerate(kernel.spec.args):
        if arg.kind == "buffer" and kernel.buffer_elements(arg, config) <= 0:
            raise _SpecProblem(f"args[{i}] ({arg.name}).shape", f"is not positive {at}")

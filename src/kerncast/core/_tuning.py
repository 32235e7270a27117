"""Kernel Tuner's vocabulary: a problem size and tunable parameters make a launch.

A Kernel Tuner user describes a kernel's launches with ``problem_size``, the tunable
parameters ``tune_params``, ``restrictions`` on them, ``grid_div_x/y/z`` and
``block_size_names``; :class:`Tuning` holds these and, for one choice of parameter
values, gives what Kernel Tuner would launch and compile:

- the block: the parameters named by ``block_size_names`` (default ``block_size_x``,
  ``block_size_y``, ``block_size_z``), 256 x 1 x 1 where a name is not a parameter;
- the grid: ``ceil(problem_size[i] / prod(grid_div_i))`` per dimension, where each
  divisor is a parameter name or an expression over the parameters (default: the
  block size of that dimension);
- the defines: every parameter, the block and grid sizes (``block_size_x``,
  ``grid_size_x``, ...) and ``kernel_tuner``; a ``loop_unroll_factor_NAME`` of 0
  removes the line ``#pragma unroll loop_unroll_factor_NAME`` from the source.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from kerncast._errors import InputError
from kerncast.core._expr import evaluate
from kerncast.core._kernel import Kernel

__all__ = ["DEFAULT_BLOCK_NAMES", "Tuning"]

DEFAULT_BLOCK_NAMES = ("block_size_x", "block_size_y", "block_size_z")
_UNROLL = "loop_unroll_factor_"

Restriction = str | Callable[[dict[str, Any]], bool]


def _listed(value: Any) -> list:
    if value is None:
        return []
    if isinstance(value, (str, int, float, np.generic)) or callable(value):
        return [value.item() if isinstance(value, np.generic) else value]
    try:
        return [v.item() if isinstance(v, np.generic) else v for v in value]
    except TypeError:
        raise InputError(f"{value!r} is neither a value nor a list of values") from None


def _value(expr: Any, params: Mapping[str, Any], what: str) -> Any:
    if isinstance(expr, bool) or not isinstance(expr, str):
        return expr
    try:
        return evaluate(expr, dict(params))
    except InputError as exc:
        raise InputError(f"{what} {expr!r}: {exc}") from None


def _whole(expr: Any, params: Mapping[str, Any], what: str) -> int:
    """``expr`` (a number, a parameter's name or an expression) as a whole number."""
    value = _value(expr, params, what)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or float(value) != int(value):
        raise InputError(f"{what} {expr!r} is not a whole number (it comes to {value!r})")
    return int(value)


@dataclass(frozen=True)
class Tuning:
    """A problem size, tunable parameters and how they make launches (see the module)."""

    problem_size: tuple[Any, ...] = ()
    tune_params: Mapping[str, list] = field(default_factory=dict)
    restrictions: tuple[Restriction, ...] = ()
    grid_div: tuple[tuple[Any, ...] | None, ...] = (None, None, None)
    block_size_names: tuple[str, ...] = DEFAULT_BLOCK_NAMES

    @classmethod
    def of(cls, problem_size: Any = None, tune_params: Mapping[str, Any] | None = None, *,
           restrictions: Any = None, grid_div_x: Any = None, grid_div_y: Any = None,
           grid_div_z: Any = None, block_size_names: Sequence[str] | None = None) -> Tuning:
        """From Kernel Tuner's arguments (an int or a tuple for ``problem_size``; each
        ``tune_params`` entry a value or a list of values)."""
        size = tuple(_listed(problem_size))
        if len(size) > 3:
            raise InputError(f"problem_size has {len(size)} dimensions; give one to three")
        if tune_params is not None and not isinstance(tune_params, Mapping):
            raise InputError("tune_params maps each parameter's name to its values, e.g. "
                             '{"block_size_x": [64, 128]}')
        params = {}
        for name, values in (tune_params or {}).items():
            listed = _listed(values)
            if not listed:
                raise InputError(f"tunable parameter {name!r} has no values; give a list")
            params[str(name)] = listed
        names = DEFAULT_BLOCK_NAMES if block_size_names is None else tuple(
            _listed(block_size_names))
        if not 1 <= len(names) <= 3 or not all(isinstance(n, str) for n in names):
            raise InputError("block_size_names names one to three parameters, e.g. "
                             '["block_size_x", "block_size_y"]')
        divs = tuple(None if d is None else tuple(_listed(d))
                     for d in (grid_div_x, grid_div_y, grid_div_z))
        return cls(size, params, tuple(_listed(restrictions)), divs, names)

    def configs(self) -> list[dict[str, Any]]:
        """Every combination of parameter values the restrictions allow, in Kernel Tuner's
        order (the last parameter varies fastest)."""
        names = list(self.tune_params)
        combos = (dict(zip(names, values))
                  for values in itertools.product(*(self.tune_params[n] for n in names)))
        return [c for c in combos if self.allowed(c)]

    def allowed(self, params: Mapping[str, Any]) -> bool:
        """Whether ``params`` pass every restriction."""
        for rule in self.restrictions:
            if callable(rule):
                ok = rule(dict(params))
            else:
                ok = _value(rule, params, "restriction")
            if not ok:
                return False
        return True

    def check(self, params: Mapping[str, Any]) -> None:
        """Refuse values that are not among a parameter's, or that a restriction excludes."""
        for name, value in params.items():
            allowed = self.tune_params.get(name)
            if allowed is not None and value not in allowed:
                raise InputError(f"{name}={value} is not among the values of the tunable "
                                 f"parameter {name}: {allowed}")
        if not self.allowed(params):
            rules = ", ".join(r if isinstance(r, str) else getattr(r, "__name__", "a function")
                              for r in self.restrictions)
            raise InputError(f"the configuration {dict(params)} is excluded by the "
                             f"restrictions ({rules}); choose values they allow")

    def block(self, params: Mapping[str, Any]) -> tuple[int, int, int]:
        defaults = (256, 1, 1)
        dims = [_whole(params.get(name, defaults[i]), params, name)
                for i, name in enumerate(self.block_size_names)]
        return tuple(dims + [1] * (3 - len(dims)))  # type: ignore[return-value]

    def grid(self, params: Mapping[str, Any]) -> tuple[int, int, int]:
        if not self.problem_size:
            raise InputError("a launch needs a grid, or a problem_size to derive it from")
        block = self.block(params)
        out = []
        for i in range(3):
            size = self.problem_size[i] if i < len(self.problem_size) else 1
            size = _whole(size, params, "problem_size")
            div = self.grid_div[i]
            if div is None:
                divisor = block[i] if i < len(self.block_size_names) else 1
            else:
                divisor = math.prod(_whole(d, params, f"grid_div_{'xyz'[i]}") for d in div)
            if divisor < 1:
                raise InputError(f"grid_div_{'xyz'[i]} comes to {divisor}; it must be positive")
            out.append(max(1, math.ceil(size / divisor)))
        return tuple(out)  # type: ignore[return-value]

    def defines(self, params: Mapping[str, Any], grid: tuple[int, ...],
                block: tuple[int, ...]) -> dict[str, Any]:
        """The macros Kernel Tuner compiles a configuration with."""
        out: dict[str, Any] = {"kernel_tuner": 1}
        for axis, (g, b) in enumerate(zip(grid, block)):
            out[f"grid_size_{'xyz'[axis]}"] = g
            out[f"block_size_{'xyz'[axis]}"] = b
        out.update({k: (int(v) if isinstance(v, bool) else v) for k, v in params.items()
                    if not (k.startswith(_UNROLL) and v == 0)})
        return out

    def kernel(self, kernel: Kernel, params: Mapping[str, Any], grid: tuple[int, ...],
               block: tuple[int, ...]) -> Kernel:
        """``kernel`` as Kernel Tuner compiles it with ``params``."""
        out = kernel.with_defines(self.defines(params, grid, block))
        removed = [k for k, v in params.items() if k.startswith(_UNROLL) and v == 0]
        if not removed:
            return out
        text = kernel.source
        for name in removed:
            text = re.sub(rf"^[ \t]*#pragma\s+unroll\s+{re.escape(name)}\b.*$", "", text,
                          flags=re.M)
        dirs = out.include_dirs + ((kernel.path.parent,) if kernel.path is not None else ())
        return replace(out, text=text, path=None, include_dirs=dirs)

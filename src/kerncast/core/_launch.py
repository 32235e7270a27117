"""One launch of a kernel: grid, block, dynamic shared memory and the arguments.

:class:`Launch` is the launch every layer shares: the emulator walks its geometry, the
static model simulates it, the measurement backends run it, the corpus produces it
(with ``size`` and ``params`` naming the point of its launch space). Its arguments are
:data:`~kerncast.core.Argument` values; :meth:`Launch.materialise` turns them into the
arrays and numbers a run needs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from kerncast._errors import InputError
from kerncast.core._args import Argument, Array, BufferOffset, Scalar, Struct, View, as_argument

__all__ = ["MAX_GRID", "MAX_THREADS", "Launch", "dims"]

MAX_THREADS = 1024
#: The most copies of a launch's buffers that repeated timed launches cycle through.
MAX_INPUT_SETS = 8
MAX_GRID = (2**31 - 1, 65535, 65535)


def dims(value: Any, what: str) -> tuple[int, int, int]:
    """One to three positive integers, padded with ones to (x, y, z)."""
    if isinstance(value, (int, np.integer)):
        value = (int(value),)
    try:
        out = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise InputError(f"the {what} must be an integer or up to three integers, got "
                         f"{value!r}") from None
    if not 1 <= len(out) <= 3:
        raise InputError(f"the {what} has {len(out)} dimensions; give one to three")
    if any(d < 1 for d in out):
        raise InputError(f"every {what} dimension must be at least 1, got {out}")
    return out + (1,) * (3 - len(out))  # type: ignore[return-value]



def cycled_copies(buffer_bytes: float, l2_bytes: float, most: int = MAX_INPUT_SETS) -> int:
    """How many copies of a launch's buffers (``buffer_bytes`` in all) its repeated timed
    launches cycle through, so that each launch finds its data evicted from an L2 of
    ``l2_bytes``: enough for twice the L2 and one more, at most ``most``; one where a copy
    is larger than twice the L2, or there is no L2."""
    if l2_bytes <= 0 or buffer_bytes > 2 * l2_bytes:
        return 1
    return max(1, min(most, math.ceil(2 * l2_bytes / max(buffer_bytes, 1)) + 1))

@dataclass(frozen=True, eq=False)
class Launch:
    """Grid and block (x, y, z), dynamic shared memory in bytes, and the arguments.

    ``names`` label the arguments in messages (default ``arg0``, ``arg1``, ...);
    ``params`` are the values of the launch's tunable parameters and ``size`` the
    problem size it was made for, where it has them; ``seed`` seeds generated arrays;
    ``constants`` are values of the kernel's ``__constant__`` variables by name (Kernel
    Tuner's ``cmem_args``).
    """

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_shared: int = 0
    args: tuple[Argument, ...] = ()
    names: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    size: str | None = None
    seed: int = 0
    constants: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "grid", dims(self.grid, "grid"))
        object.__setattr__(self, "block", dims(self.block, "block"))
        if self.threads_per_block > MAX_THREADS:
            raise InputError(f"block size {self.threads_per_block} exceeds the limit of "
                             f"{MAX_THREADS} threads per block; choose a smaller block")
        for axis, (g, limit) in enumerate(zip(self.grid, MAX_GRID)):
            if g > limit:
                raise InputError(f"grid dimension {'xyz'[axis]} = {g} exceeds the limit {limit}")
        if int(self.dynamic_shared) < 0:
            raise InputError("dynamic shared memory cannot be negative")
        object.__setattr__(self, "dynamic_shared", int(self.dynamic_shared))
        args = tuple(as_argument(a) for a in self.args)
        object.__setattr__(self, "args", args)
        names = tuple(self.names) or tuple(f"arg{i}" for i in range(len(args)))
        if len(names) != len(args):
            raise InputError(f"{len(names)} argument names for {len(args)} arguments")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "params", dict(self.params))
        object.__setattr__(self, "constants", {str(k): np.asarray(v)
                                               for k, v in dict(self.constants).items()})

    @property
    def geometry(self) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
        """(grid, block, dynamic shared bytes): what two launches of one shape share."""
        return self.grid, self.block, self.dynamic_shared

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def padded_threads(self) -> int:
        """Threads per block rounded up to whole warps."""
        return -(-self.threads_per_block // 32) * 32

    @property
    def warps_per_block(self) -> int:
        return self.padded_threads // 32

    def block_index(self, linear: int) -> tuple[int, int, int]:
        gx, gy, _ = self.grid
        return linear % gx, (linear // gx) % gy, linear // (gx * gy)

    def thread_index(self, linear: int) -> tuple[int, int, int]:
        bx, by, _ = self.block
        return linear % bx, (linear // bx) % by, linear // (bx * by)

    def label(self) -> str:
        """``name=value,...`` of the parameters, or ``default``."""
        return ",".join(f"{k}={v}" for k, v in sorted(self.params.items())) or "default"

    def with_grid(self, grid: tuple[int, ...]) -> Launch:
        """The same launch on another grid (a sample of it)."""
        return replace(self, grid=dims(grid, "grid"))

    def arrays(self) -> dict[str, Array]:
        """The array arguments by name."""
        return {n: a for n, a in zip(self.names, self.args) if isinstance(a, Array)}

    def buffer_bytes(self) -> int:
        """Bytes of all the launch's arrays together."""
        return sum(a.nbytes for a in self.arrays().values())

    def argument(self, name_or_index: str | int) -> tuple[int, str, Argument]:
        """(index, name, argument) of one argument, or an error naming the ones there are."""
        if isinstance(name_or_index, (int, np.integer)) and 0 <= name_or_index < len(self.args):
            i = int(name_or_index)
            return i, self.names[i], self.args[i]
        if name_or_index in self.names:
            i = self.names.index(name_or_index)
            return i, self.names[i], self.args[i]
        raise InputError(f"the launch has no argument {name_or_index!r}; its arguments are "
                         f"{', '.join(self.names) or 'none'}")

    def materialise(self, generate: bool = True, data: bool = True,
                    chunked: bool = False) -> list[Any]:
        """The values to run with, in order: arrays (data, generated or zeros), numbers,
        struct bytes, and :class:`BufferOffset` for views. Arrays with data come
        read-only; a run that writes copies them. With ``data`` false every array is
        zeros, its data left alone (for a run whose trace does not depend on values).
        With ``chunked`` (for an emulation) large generated arrays may come as
        :class:`~kerncast.core.Chunked` ones (see :meth:`Array.values`)."""
        values: list[Any] = []
        for i, arg in enumerate(self.args):
            if isinstance(arg, Array):
                rng = np.random.default_rng([self.seed, i])
                values.append(arg.values(rng, generate, data, chunked))
            elif isinstance(arg, (Scalar, Struct)):
                values.append(arg.values())
            else:
                values.append(None)
        for i, arg in enumerate(self.args):
            if isinstance(arg, View):
                values[i] = self._offset(i, arg, values)
        return values

    def _offset(self, i: int, view: View, values: list[Any]) -> BufferOffset:
        if isinstance(view.of, np.ndarray):
            hits = [k for k, a in enumerate(self.args)
                    if isinstance(a, Array) and a.data is view.of]
            if not hits:
                raise InputError(f"argument {self.names[i]} is a view of an array that is not "
                                 "among the launch's arguments; pass that array too")
            k = hits[0]
        else:
            k, _, target = self.argument(view.of)
            if not isinstance(target, Array):
                raise InputError(f"argument {self.names[i]} is a view of {self.names[k]}, "
                                 "which is not an array")
        base = values[k]
        if not 0 <= view.offset <= base.size:
            raise InputError(f"argument {self.names[i]} points {view.offset} elements into "
                             f"{self.names[k]}, which has {base.size}; give an offset in "
                             f"0..{base.size}")
        return BufferOffset(base, int(view.offset) * base.dtype.itemsize)

    def describe(self) -> list[str]:
        """One line per argument: its name and what it holds."""
        return [f"{n}: {a.describe()}" for n, a in zip(self.names, self.args)]

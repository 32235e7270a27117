"""Closure builders shared by the instruction families.

An instruction becomes ``fn(lanes)``. Element-wise instructions compute over
``lanes.sl`` (a slice or an index array) and write through the destination's
writer, which honours ``lanes.mask``; on a dense slice a NumPy ufunc writes its
result straight into the destination register (``out=``), with no temporary.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from kerncast.emu._errors import UnsupportedInstruction
from kerncast.emu._program import Frame
from kerncast.ptx import Instruction

__all__ = ["Ctx", "unsupported", "elementwise", "ufunc_op", "dest_view"]


class Ctx:
    """What a family translator needs: operand access, spaces, the recorder, the machine."""

    def __init__(self, access, machine) -> None:
        self.access = access
        self.machine = machine

    def src(self, frame: Frame, op, ptype: str, **kw):
        return self.access.src(frame, op, ptype, **kw)

    def dst(self, frame: Frame, op, ptype: str, **kw):
        return self.access.dst(frame, op, ptype, **kw)[0]


def unsupported(ins: Instruction, why: str = "") -> UnsupportedInstruction:
    """The error for an instruction (or a form of it) the emulator lacks."""
    detail = f" ({why})" if why else ""
    return UnsupportedInstruction(
        f"PTX line {ins.line}: '{ins.name}' is not supported by the emulator{detail}",
        line=ins.line, instruction=str(ins))


def dest_view(ctx: Ctx, frame: Frame, op, ptype: str) -> np.ndarray | None:
    """The destination register as an array of exactly ``ptype`` (for ``out=``), or None."""
    from kerncast.ptx import Reg

    if not isinstance(op, Reg):
        return None
    try:
        array = ctx.access.reg_array(frame, op, ptype)
    except UnsupportedInstruction:
        return None
    return array


def elementwise(ctx: Ctx, frame: Frame, ins: Instruction, compute: Callable, dtype: str,
                stypes: tuple[str, ...], dest=None, first: int = 1) -> Callable:
    """``d = compute(a, b, ...)`` over the sources ``operands[first:]`` of types ``stypes``."""
    write = ctx.dst(frame, dest if dest is not None else ins.operands[0], dtype)
    getters = [ctx.src(frame, op, t) for op, t in zip(ins.operands[first:], stypes)]
    if len(getters) == 1:
        (ga,) = getters

        def fn1(lanes):
            write(lanes, compute(ga(lanes.sl)))
        return fn1
    if len(getters) == 2:
        ga, gb = getters

        def fn2(lanes):
            sl = lanes.sl
            write(lanes, compute(ga(sl), gb(sl)))
        return fn2
    if len(getters) == 3:
        ga, gb, gc = getters

        def fn3(lanes):
            sl = lanes.sl
            write(lanes, compute(ga(sl), gb(sl), gc(sl)))
        return fn3

    def fnn(lanes):
        sl = lanes.sl
        write(lanes, compute(*[g(sl) for g in getters]))
    return fnn


def ufunc_op(ctx: Ctx, frame: Frame, ins: Instruction, ufunc, ptype: str,
             stypes: tuple[str, ...] | None = None) -> Callable:
    """A NumPy ufunc of the sources into the destination, in place on dense slices."""
    stypes = stypes or (ptype,) * ufunc.nin
    out = dest_view(ctx, frame, ins.operands[0], ptype)
    if out is None:
        return elementwise(ctx, frame, ins, ufunc, ptype, stypes)
    write = ctx.dst(frame, ins.operands[0], ptype)
    getters = [ctx.src(frame, op, t) for op, t in zip(ins.operands[1:], stypes)]
    if ufunc.nin == 1:
        (ga,) = getters

        def un(lanes):
            sl = lanes.sl
            if lanes.full:
                ufunc(ga(sl), out=out[sl])
            else:
                write(lanes, ufunc(ga(sl)))
        return un
    ga, gb = getters

    def bin_(lanes):
        sl = lanes.sl
        if lanes.full:
            ufunc(ga(sl), gb(sl), out=out[sl])
        else:
            write(lanes, ufunc(ga(sl), gb(sl)))
    return bin_

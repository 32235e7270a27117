"""Translation of every instruction of a program into a closure ``fn(lanes)``.

Translation happens once per launch, before anything runs, so an unsupported
instruction is reported (with its PTX line) before the first step. Control
instructions (branches, exits, barriers) get no closure: the machine handles them
at the end of their segment.
"""

from __future__ import annotations

import weakref
from typing import Callable

import numpy as np

from kerncast.emu import _ops_atom, _ops_bits, _ops_cmp, _ops_cvt, _ops_float, _ops_int
from kerncast.emu import _ops_mem, _ops_warp
from kerncast.emu._build import Ctx, unsupported
from kerncast.emu._errors import UnsupportedInstruction
from kerncast.emu._program import PInstr, Program
from kerncast.emu._slice import ADDRESSES, FULL, SKIP
from kerncast.ptx import Instruction

__all__ = ["CONTROL", "translate_program"]

CONTROL = frozenset(("bra", "brx", "ret", "exit", "trap"))
_PLAIN = {**_ops_int.HANDLERS, **_ops_bits.HANDLERS, **_ops_cmp.HANDLERS, **_ops_cvt.HANDLERS}
_WITH_PC = {**_ops_mem.HANDLERS, **_ops_atom.HANDLERS, **_ops_warp.HANDLERS}
_FLOAT_OPS = frozenset(_ops_float.HANDLERS)


def _is_control(item: PInstr) -> bool:
    ins = item.instr
    if item.kind in ("ret", "trap"):
        return True
    if item.kind != "op":
        return False
    if ins.opcode in CONTROL:
        return True
    return ins.opcode in ("bar", "barrier") and ins.mode != "warp"


def _handler(ins: Instruction, pc: int):
    op = ins.opcode
    if op in _FLOAT_OPS and (ins.type in _ops_float.FLOAT_TYPES or op in (
            "sin", "cos", "ex2", "lg2", "tanh", "rsqrt", "fma")):
        handler = _ops_float.HANDLERS[op]
        return lambda ctx, frame: handler(ctx, frame, ins)
    if op in _PLAIN:
        handler = _PLAIN[op]
        return lambda ctx, frame: handler(ctx, frame, ins)
    if op in _WITH_PC:
        handler = _WITH_PC[op]
        return lambda ctx, frame: handler(ctx, frame, ins, pc)
    if op in ("bar", "barrier") and ins.mode == "warp":
        return lambda ctx, frame: (lambda lanes: None)
    raise unsupported(ins)


def guarded(fn: Callable, get_pred: Callable) -> Callable:
    """Run ``fn`` only on the lanes where the guard predicate holds."""
    count_nonzero = np.count_nonzero

    def run(lanes):
        p = get_pred(lanes.sl)
        mask = lanes.mask
        if mask is not None:
            p = p & mask
        count = count_nonzero(p)
        if count == lanes.n:
            fn(lanes)
        elif count:
            fn(lanes.restrict(p))
    return run


def _bind(ctx: Ctx, item: PInstr) -> Callable:
    """Copy of an argument or a result of a ``.reg``-parameter function."""
    dst_frame, dst, src_frame, src, ptype = item.bind
    get = ctx.access.src(src_frame, src, ptype)
    write = ctx.access.dst(dst_frame, dst, ptype)[0]
    return lambda lanes: write(lanes, get(lanes.sl))


#: programs every instruction of which has been translated: the instructions left out
#: or reduced to addresses need not be translated again to be known to be supported
_CHECKED: weakref.WeakSet = weakref.WeakSet()


def translate_program(program: Program, ctx: Ctx, modes=None) -> list[Callable | None]:
    """One closure per instruction (None for control instructions and no-ops).

    ``modes`` (from :func:`kerncast.emu._slice.value_slice`) leaves out the
    instructions whose results the trace does not need (``SKIP``) and reduces the
    loads, stores and atomics whose values it does not need to their addresses
    (``ADDRESSES``); every instruction is still translated the first time a program
    is, so that what cannot be emulated is reported in either case.

    Raises
    ------
    UnsupportedInstruction
        For the first instruction the emulator cannot run.
    """
    closures: list[Callable | None] = []
    checked = program in _CHECKED
    for pc, item in enumerate(program.items):
        if _is_control(item) or item.kind in ("call", "noop"):
            closures.append(None)
            continue
        mode = FULL if modes is None else modes[pc]
        if item.kind == "bind":
            closures.append(_bind(ctx, item) if mode == FULL else None)
            continue
        ins = item.instr
        if checked and mode == SKIP:
            closures.append(None)
            continue
        try:
            fn = _handler(ins, pc)(ctx, item.frame) if not checked or mode == FULL else None
            if mode == SKIP:
                fn = None
            elif mode == ADDRESSES:
                fn = _ops_mem.addresses_only(ctx, item.frame, ins, pc)
            if fn is not None and ins.guard is not None:
                fn = guarded(fn, ctx.access.pred(item.frame, ins.guard))
        except UnsupportedInstruction as exc:
            if exc.line:
                raise
            raise UnsupportedInstruction(
                f"PTX line {ins.line}: '{ins}' cannot be emulated: {exc}", line=ins.line,
                instruction=str(ins)) from None
        except (ValueError, IndexError, TypeError, KeyError, AttributeError) as exc:
            # operands a translator cannot take (too few, of another kind): the parser
            # checks the syntax, not every opcode's operand list
            raise UnsupportedInstruction(
                f"PTX line {ins.line}: '{ins}' has operands the emulator cannot take "
                f"({type(exc).__name__}: {exc}); check the instruction against the PTX ISA",
                line=ins.line, instruction=str(ins)) from None
        closures.append(fn)
    _CHECKED.add(program)
    return closures

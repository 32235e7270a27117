"""Compares and selects: setp, set, selp, slct, testp.

Float compares follow IEEE: the ordered ones (``eq``, ``ne``, ``lt``...) are false
when an operand is NaN, the unordered ones (``equ``, ``neu``, ``ltu``...) true;
``num`` and ``nan`` test for NaNs. Integer compares are signed for ``.s`` types and
unsigned otherwise; ``lo``/``ls``/``hi``/``hs`` are always unsigned.
"""

from __future__ import annotations

import numpy as np

from kerncast.emu._build import Ctx, elementwise, unsupported
from kerncast.emu._fround import from_half_bits
from kerncast.emu._types import dtype_of
from kerncast.ptx import Instruction

__all__ = ["HANDLERS", "compare"]

_FLOATS = frozenset(("f16", "f32", "f64", "bf16"))
_ORDERED = {"eq": np.equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal}
_UNSIGNED_ALIASES = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


def _plain_compare(cmp: str, is_float: bool):
    """The ufunc that is :func:`compare` for ``cmp``, where one is."""
    if not is_float:
        cmp = _UNSIGNED_ALIASES.get(cmp, cmp)
        return np.not_equal if cmp == "ne" else _ORDERED.get(cmp)
    return _ORDERED.get(cmp)


def compare(cmp: str, a, b, is_float: bool) -> np.ndarray:
    """``a cmp b`` as PTX defines it (a and b already in the compare type)."""
    plain = _plain_compare(cmp, is_float)
    if plain is not None:
        return plain(a, b)
    if not is_float:
        raise KeyError(cmp)  # no integer compare of that name
    if cmp == "ne":
        return np.less(a, b) | np.greater(a, b)
    nan = np.isnan(a) | np.isnan(b)
    if cmp == "num":
        return ~nan
    if cmp == "nan":
        return nan
    base = cmp[:-1]
    if base == "ne":
        return np.not_equal(a, b)
    return _ORDERED[base](a, b) | nan


def _operand_type(ins: Instruction) -> tuple[str, bool]:
    ptype = ins.types[-1]
    if ptype == "bf16":
        return ptype, True
    if ptype in ("f16x2", "bf16x2"):
        raise unsupported(ins, f"packed .{ptype} compares")
    if ptype not in ("pred",) and ptype[0] in "bus" and ptype in ("b16", "b32", "b64", "b8",
                                                                  "u8", "u16", "u32", "u64",
                                                                  "s8", "s16", "s32", "s64"):
        if ptype[0] == "b":
            ptype = "u" + ptype[1:]
        return ptype, False
    if ptype in _FLOATS:
        return ptype, True
    raise unsupported(ins, f"compare type .{ptype}")


def _reader(ctx: Ctx, frame, op, ptype: str):
    if ptype == "bf16":
        raw = ctx.src(frame, op, "b16")
        return lambda sl: from_half_bits(raw(sl), "bf16")
    return ctx.src(frame, op, ptype)


def _combine(boolop: str | None, value, c):
    if boolop is None:
        return value
    return {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[boolop](value, c)


def _setp(ctx: Ctx, frame, ins: Instruction):
    ptype, is_float = _operand_type(ins)
    cmp = ins.cmp
    if cmp is None:
        raise unsupported(ins, "no comparison operator")
    from kerncast.ptx import RegPair

    first = ins.operands[0]
    pw = ctx.dst(frame, first.first if isinstance(first, RegPair) else first, "pred")
    qw = ctx.dst(frame, first.second, "pred") if isinstance(first, RegPair) else None
    ga, gb = (_reader(ctx, frame, op, ptype) for op in ins.operands[1:3])
    gc = ctx.src(frame, ins.operands[3], "pred") if len(ins.operands) > 3 else None
    boolop = ins.boolop
    plain = _plain_compare(cmp, is_float)
    if plain is not None and boolop is None and qw is None:
        # the common ``setp.lt.s32 %p, %r, %s``: one ufunc, one write
        def one(lanes):
            sl = lanes.sl
            pw(lanes, plain(ga(sl), gb(sl)))
        return one

    def fn(lanes):
        sl = lanes.sl
        value = compare(cmp, ga(sl), gb(sl), is_float)
        c = gc(sl) if gc is not None else None
        pw(lanes, _combine(boolop, value, c))
        if qw is not None:
            qw(lanes, _combine(boolop, ~value, c))
    return fn


def _set(ctx: Ctx, frame, ins: Instruction):
    if len(ins.types) != 2:
        raise unsupported(ins, "needs destination and source types")
    dtype = ins.types[0]
    ptype, is_float = _operand_type(ins)
    ga, gb = (_reader(ctx, frame, op, ptype) for op in ins.operands[1:3])
    gc = ctx.src(frame, ins.operands[3], "pred") if len(ins.operands) > 3 else None
    write = ctx.dst(frame, ins.operands[0], dtype)
    dt = dtype_of(dtype)
    true = dt.type(1.0) if dt.kind == "f" else dt.type(-1 if dt.kind == "i" else
                                                      np.iinfo(dt).max)
    false = dt.type(0)
    cmp, boolop = ins.cmp, ins.boolop

    def fn(lanes):
        sl = lanes.sl
        value = compare(cmp, ga(sl), gb(sl), is_float)
        value = _combine(boolop, value, gc(sl) if gc is not None else None)
        write(lanes, np.where(value, true, false))
    return fn


def _selp(ctx: Ctx, frame, ins: Instruction):
    ptype = ins.type
    getters = [ctx.src(frame, op, ptype) for op in ins.operands[1:3]]
    gc = ctx.src(frame, ins.operands[3], "pred")
    write = ctx.dst(frame, ins.operands[0], ptype)
    ga, gb = getters

    def fn(lanes):
        sl = lanes.sl
        write(lanes, np.where(gc(sl), ga(sl), gb(sl)))
    return fn


def _slct(ctx: Ctx, frame, ins: Instruction):
    if len(ins.types) != 2:
        raise unsupported(ins, "needs two types")
    dtype, ctype = ins.types
    ftz = "ftz" in ins.flags

    def choose(a, b, c):
        c = np.asarray(c)
        if ctype == "f32" and ftz:
            c = np.where(np.abs(c) < np.float32(1.1754944e-38), np.float32(0), c)
        return np.where(c >= 0, a, b)
    return elementwise(ctx, frame, ins, choose, dtype, (dtype, dtype, ctype))


def _testp(ctx: Ctx, frame, ins: Instruction):
    ptype = ins.type
    if ptype not in ("f32", "f64"):
        raise unsupported(ins, f"type .{ptype}")
    tiny = np.finfo(dtype_of(ptype)).tiny
    tests = {
        "finite": np.isfinite, "infinite": np.isinf, "number": lambda a: ~np.isnan(a),
        "notanumber": np.isnan,
        "normal": lambda a: np.isfinite(a) & (np.abs(a) >= tiny),
        "subnormal": lambda a: (np.abs(a) < tiny) & (a != 0),
    }
    test = tests.get(ins.mode)
    if test is None:
        raise unsupported(ins, f"test .{ins.mode}")
    return elementwise(ctx, frame, ins, test, "pred", (ptype,))


def _copysign(ctx: Ctx, frame, ins: Instruction):
    ptype = ins.type
    if ptype not in ("f32", "f64"):
        raise unsupported(ins, f"type .{ptype}")
    return elementwise(ctx, frame, ins, lambda a, b: np.copysign(b, a), ptype, (ptype, ptype))


HANDLERS = {"setp": _setp, "set": _set, "selp": _selp, "slct": _slct, "testp": _testp,
            "copysign": _copysign}

"""Integer arithmetic: add/sub (with carries and saturation), mul/mad (lo, hi, wide),
mul24/mad24, sad, div/rem, abs/neg, min/max, dp4a/dp2a.

Integers wrap around as PTX defines. Division by zero, which PTX leaves
unspecified, gives what NVIDIA GPUs give: an all-ones quotient and the dividend as
remainder; ``INT_MIN / -1`` wraps to ``INT_MIN`` with remainder 0.
"""

from __future__ import annotations

import numpy as np

from kerncast.emu._build import Ctx, elementwise, ufunc_op, unsupported
from kerncast.emu._types import dtype_of, int_dtype, is_signed, size_of
from kerncast.ptx import Instruction

__all__ = ["HANDLERS", "mul_hi", "INT_TYPES"]

INT_TYPES = frozenset(("b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16",
                       "s32", "s64"))
_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


def _int_type(ins: Instruction) -> str:
    ptype = ins.type
    if ptype not in INT_TYPES:
        raise unsupported(ins, f"type .{ptype}")
    return ptype


def _wide(ptype: str) -> str:
    return {"u16": "u32", "s16": "s32", "u32": "u64", "s32": "s64"}[ptype]


def mul_hi(a: np.ndarray, b: np.ndarray, signed: bool, bits: int) -> np.ndarray:
    """High half of the full product of two ``bits``-bit integers (in their dtype)."""
    if bits <= 32:
        wide = int_dtype(bits // 4, signed)
        prod = np.asarray(a).astype(wide) * np.asarray(b).astype(wide)
        return (prod >> (bits)).astype(int_dtype(bits // 8, signed))
    a, b = np.asarray(a), np.asarray(b)
    ua, ub = a.astype(np.uint64), b.astype(np.uint64)
    al, ah = ua & _M32, ua >> _S32
    bl, bh = ub & _M32, ub >> _S32
    ll, lh, hl, hh = al * bl, al * bh, ah * bl, ah * bh
    mid = (ll >> _S32) + (lh & _M32) + (hl & _M32)
    hi = hh + (lh >> _S32) + (hl >> _S32) + (mid >> _S32)
    if signed:
        hi = hi - np.where(a < 0, ub, np.uint64(0)) - np.where(b < 0, ua, np.uint64(0))
        return np.asarray(hi, np.uint64).astype(np.int64)
    return np.asarray(hi, np.uint64)


def _add(ctx: Ctx, frame, ins: Instruction):
    ptype = _int_type(ins)
    sub = ins.opcode in ("sub", "subc")
    if ins.opcode in ("addc", "subc") or "cc" in ins.flags:
        return _carry(ctx, frame, ins, ptype, sub)
    if "sat" in ins.flags:
        if ptype != "s32":
            raise unsupported(ins, ".sat needs .s32")
        op = np.subtract if sub else np.add
        return elementwise(ctx, frame, ins, lambda a, b: np.clip(
            op(a.astype(np.int64), np.int64(b) if np.ndim(b) == 0 else b.astype(np.int64)),
            -2**31, 2**31 - 1).astype(np.int32), ptype, (ptype, ptype))
    return ufunc_op(ctx, frame, ins, np.subtract if sub else np.add, ptype)


def _carry(ctx: Ctx, frame, ins: Instruction, ptype: str, sub: bool):
    """add.cc/addc/sub.cc/subc: ``%cc`` holds the carry (or borrow) bit per lane."""
    size = size_of(ptype)
    if size not in (4, 8):
        raise unsupported(ins, "carry arithmetic needs 32- or 64-bit types")
    utype = "u32" if size == 4 else "u64"
    udt = dtype_of(utype)
    cc = ctx.access.regs.arrays["%cc"]
    use_in = ins.opcode in ("addc", "subc")
    set_out = "cc" in ins.flags
    write = ctx.dst(frame, ins.operands[0], utype)
    ga = ctx.src(frame, ins.operands[1], utype)
    gb = ctx.src(frame, ins.operands[2], utype)

    def fn(lanes):
        sl = lanes.sl
        a, b = np.asarray(ga(sl), udt), np.asarray(gb(sl), udt)
        cin = cc[sl].astype(udt) if use_in else udt.type(0)
        if sub:
            d = a - b - cin
            borrow = (a < b) | ((a == b) & (cin != 0)) if use_in else (a < b)
            out = borrow
        else:
            s = a + b
            d = s + cin
            out = (s < a) | (d < s)
        write(lanes, d)
        if set_out:
            _write_cc(cc, lanes, np.broadcast_to(out, d.shape).astype(np.uint32))
    return fn


def _write_cc(cc: np.ndarray, lanes, value) -> None:
    if lanes.mask is None:
        cc[lanes.sl] = value
    else:
        np.copyto(cc[lanes.sl], value, where=lanes.mask)


def _mul(ctx: Ctx, frame, ins: Instruction):
    ptype = _int_type(ins)
    size = size_of(ptype)
    signed = is_signed(ptype)
    if "wide" in ins.flags:
        if size not in (2, 4):
            raise unsupported(ins, ".wide needs 16- or 32-bit sources")
        wtype = _wide(ptype)
        wdt = dtype_of(wtype)
        return elementwise(ctx, frame, ins, lambda a, b: np.multiply(
            np.asarray(a).astype(wdt), np.asarray(b).astype(wdt)), wtype, (ptype, ptype))
    if "hi" in ins.flags:
        return elementwise(ctx, frame, ins, lambda a, b: mul_hi(a, b, signed, size * 8),
                           ptype, (ptype, ptype))
    return ufunc_op(ctx, frame, ins, np.multiply, ptype)


def _mad(ctx: Ctx, frame, ins: Instruction):
    ptype = _int_type(ins)
    size = size_of(ptype)
    signed = is_signed(ptype)
    if ins.opcode == "madc" or "cc" in ins.flags:
        return _mad_carry(ctx, frame, ins, ptype)
    if "wide" in ins.flags:
        wtype = _wide(ptype)
        wdt = dtype_of(wtype)
        return elementwise(ctx, frame, ins, lambda a, b, c: np.asarray(a).astype(wdt)
                           * np.asarray(b).astype(wdt) + c, wtype, (ptype, ptype, wtype))
    if "hi" in ins.flags:
        if "sat" in ins.flags:
            def hi_sat(a, b, c):
                total = mul_hi(a, b, True, 32).astype(np.int64) + np.asarray(c, np.int64)
                return np.clip(total, -2**31, 2**31 - 1).astype(np.int32)
            return elementwise(ctx, frame, ins, hi_sat, ptype, (ptype,) * 3)
        return elementwise(ctx, frame, ins, lambda a, b, c: mul_hi(a, b, signed, size * 8) + c,
                           ptype, (ptype,) * 3)
    return elementwise(ctx, frame, ins, lambda a, b, c: a * b + c, ptype, (ptype,) * 3)


def _mad_carry(ctx: Ctx, frame, ins: Instruction, ptype: str):
    size = size_of(ptype)
    signed = is_signed(ptype)
    utype = "u32" if size == 4 else "u64"
    udt = dtype_of(utype)
    cc = ctx.access.regs.arrays["%cc"]
    use_in, set_out = ins.opcode == "madc", "cc" in ins.flags
    hi = "hi" in ins.flags
    write = ctx.dst(frame, ins.operands[0], utype)
    ga, gb = (ctx.src(frame, op, ptype) for op in ins.operands[1:3])
    gc = ctx.src(frame, ins.operands[3], utype)

    def fn(lanes):
        sl = lanes.sl
        a, b = ga(sl), gb(sl)
        prod = mul_hi(a, b, signed, size * 8) if hi else np.multiply(a, b)
        prod = np.asarray(prod).view(udt) if np.ndim(prod) else udt.type(prod)
        c = np.asarray(gc(sl), udt)
        cin = cc[sl].astype(udt) if use_in else udt.type(0)
        s = prod + c
        d = s + cin
        write(lanes, d)
        if set_out:
            _write_cc(cc, lanes, np.broadcast_to((s < c) | (d < s), np.shape(d))
                      .astype(np.uint32))
    return fn


def _sext24(x: np.ndarray, signed: bool) -> np.ndarray:
    x = np.asarray(x).astype(np.int64) & 0xFFFFFF
    if signed:
        x = np.where(x & 0x800000, x - 0x1000000, x)
    return x


def _mul24(ctx: Ctx, frame, ins: Instruction):
    ptype = _int_type(ins)
    if ptype not in ("u32", "s32"):
        raise unsupported(ins, "needs .u32 or .s32")
    signed = ptype == "s32"
    hi = "hi" in ins.flags
    dt = dtype_of(ptype)

    def product(a, b):
        prod = _sext24(a, signed) * _sext24(b, signed)
        prod = (prod >> 16) if hi else prod
        return (prod & 0xFFFFFFFF).astype(np.uint32).view(dt)

    if ins.opcode == "mul24":
        return elementwise(ctx, frame, ins, product, ptype, (ptype, ptype))
    return elementwise(ctx, frame, ins, lambda a, b, c: product(a, b) + c, ptype, (ptype,) * 3)


def _sad(ctx: Ctx, frame, ins: Instruction):
    ptype = _int_type(ins)
    udt = int_dtype(size_of(ptype), False)

    def sad(a, b, c):
        diff = np.where(a > b, np.asarray(a).astype(udt) - np.asarray(b).astype(udt),
                        np.asarray(b).astype(udt) - np.asarray(a).astype(udt))
        return (diff + np.asarray(c).astype(udt)).astype(udt).view(dtype_of(ptype))
    return elementwise(ctx, frame, ins, sad, ptype, (ptype,) * 3)


def divide(a, b, ptype: str, rem: bool):
    """Integer division (truncating) or remainder with NVIDIA's results for edge cases."""
    dt = dtype_of(ptype)
    a, b = np.asarray(a, dt), np.asarray(b, dt)
    zero = b == 0
    safe = np.where(zero, dt.type(1), b)
    if is_signed(ptype):
        lo = np.iinfo(dt).min
        overflow = (a == lo) & (safe == -1)
        safe = np.where(overflow, dt.type(1), safe)
        wide = np.int64
        ua = np.abs(a.astype(wide)).astype(np.uint64)
        ub = np.abs(safe.astype(wide)).astype(np.uint64)
        neg = (a < 0) != (safe < 0)
        mag = ua // ub
        q = np.where(neg, (~mag) + np.uint64(1), mag).astype(dt)
        q = np.where(overflow, dt.type(lo), q)
        r = (a - q * np.where(overflow, dt.type(-1), safe)).astype(dt)
        r = np.where(overflow, dt.type(0), r)
    else:
        q = a // safe
        r = a - q * safe
    if rem:
        return np.where(zero, a, r).astype(dt)
    return np.where(zero, dt.type(-1) if is_signed(ptype) else np.iinfo(dt).max, q).astype(dt)


def _div(ctx: Ctx, frame, ins: Instruction):
    ptype = _int_type(ins)
    rem = ins.opcode == "rem"
    return elementwise(ctx, frame, ins, lambda a, b: divide(a, b, ptype, rem), ptype,
                       (ptype, ptype))


def _abs_neg(ctx: Ctx, frame, ins: Instruction):
    ptype = _int_type(ins)
    if ins.opcode == "abs":
        return ufunc_op(ctx, frame, ins, np.abs, ptype)
    return ufunc_op(ctx, frame, ins, np.negative, ptype)


def _min_max(ctx: Ctx, frame, ins: Instruction):
    ptype = _int_type(ins)
    ufunc = np.minimum if ins.opcode == "min" else np.maximum
    if len(ins.operands) == 4:
        third = ufunc
        return elementwise(ctx, frame, ins, lambda a, b, c: third(ufunc(a, b), c), ptype,
                           (ptype,) * 3)
    if "relu" in ins.flags:
        zero = dtype_of(ptype).type(0)
        return elementwise(ctx, frame, ins, lambda a, b: np.maximum(ufunc(a, b), zero), ptype,
                           (ptype, ptype))
    return ufunc_op(ctx, frame, ins, ufunc, ptype)


def _dp(ctx: Ctx, frame, ins: Instruction):
    if len(ins.types) != 2:
        raise unsupported(ins, "needs two source types")
    at, bt = ins.types
    width = 4 if ins.opcode == "dp4a" else 2
    hi = "hi" in ins.flags
    dtype = "s32" if "s32" in (at, bt) else "u32"

    def parts(x, t, count, size, offset):
        x = np.asarray(x).view(np.uint32) if np.ndim(x) else np.uint32(x)
        out = []
        for k in range(count):
            v = (np.asarray(x, np.int64) >> (offset + k * size)) & ((1 << size) - 1)
            if t == "s32":
                v = np.where(v >> (size - 1), v - (1 << size), v)
            out.append(v)
        return out

    def dot(a, b, c):
        if width == 4:
            pa, pb = parts(a, at, 4, 8, 0), parts(b, bt, 4, 8, 0)
        else:
            pa, pb = parts(a, at, 2, 16, 0), parts(b, bt, 2, 8, 16 if hi else 0)
        total = np.asarray(c).astype(np.int64) + sum(x * y for x, y in zip(pa, pb))
        return (total & 0xFFFFFFFF).astype(np.uint32).view(dtype_of(dtype))
    return elementwise(ctx, frame, ins, dot, dtype, (at, bt, dtype))


HANDLERS = {
    "add": _add, "sub": _add, "addc": _add, "subc": _add,
    "mul": _mul, "mad": _mad, "madc": _mad, "mul24": _mul24, "mad24": _mul24, "sad": _sad,
    "div": _div, "rem": _div, "abs": _abs_neg, "neg": _abs_neg, "min": _min_max,
    "max": _min_max, "dp4a": _dp, "dp2a": _dp,
}

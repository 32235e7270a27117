"""Logic and bit instructions: and/or/xor/not/cnot, shl/shr/shf, popc/clz/bfind/brev,
bfe/bfi/bmsk/szext, prmt and lop3 (predicates too, for the logic ones)."""

from __future__ import annotations

import numpy as np

from kerncast.emu._build import Ctx, elementwise, ufunc_op, unsupported
from kerncast.emu._types import bits_dtype, dtype_of, int_dtype, is_signed, size_of
from kerncast.ptx import Instruction

__all__ = ["HANDLERS", "msb_index"]

_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.uint8)


def _bits_type(ins: Instruction) -> str:
    ptype = ins.type
    if ptype is None or ptype.startswith("f") or ptype.startswith("bf"):
        raise unsupported(ins, f"type .{ptype}")
    return ptype


def _logic(ctx: Ctx, frame, ins: Instruction):
    ptype = _bits_type(ins)
    ufunc = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[ins.opcode]
    return ufunc_op(ctx, frame, ins, ufunc, ptype)


def _not(ctx: Ctx, frame, ins: Instruction):
    ptype = _bits_type(ins)
    if ins.opcode == "not":
        return ufunc_op(ctx, frame, ins, np.logical_not if ptype == "pred" else np.invert,
                        ptype)
    one, zero = dtype_of(ptype).type(1), dtype_of(ptype).type(0)
    return elementwise(ctx, frame, ins, lambda a: np.where(a == 0, one, zero), ptype, (ptype,))


def _shift(ctx: Ctx, frame, ins: Instruction):
    ptype = _bits_type(ins)
    dt = dtype_of(ptype)
    limit = np.uint32(dt.itemsize * 8)
    ufunc = np.left_shift if ins.opcode == "shl" else np.right_shift

    def shift(a, n):
        return ufunc(a, np.minimum(n, limit).astype(dt))
    return elementwise(ctx, frame, ins, shift, ptype, (ptype, "u32"))


def _shf(ctx: Ctx, frame, ins: Instruction):
    left = ins.mode == "l"
    clamp = "clamp" in ins.flags

    def funnel(a, b, c):
        n = np.asarray(c, np.uint32)
        n = np.minimum(n, 32) if clamp else n & 31
        n = n.astype(np.uint64)
        v = (np.asarray(b).astype(np.uint64) << np.uint64(32)) | np.asarray(a).astype(np.uint64)
        if left:
            return ((v << n) >> np.uint64(32)).astype(np.uint32)
        return (v >> n).astype(np.uint32)
    return elementwise(ctx, frame, ins, funnel, "b32", ("b32", "b32", "u32"))


def _smear(x: np.ndarray, width: int) -> np.ndarray:
    x = x | (x >> 1)
    for k in (2, 4, 8, 16, 32):
        if k < width:
            x = x | (x >> k)
    return x


def msb_index(x: np.ndarray, width: int) -> np.ndarray:
    """Index of the most significant set bit of unsigned ``x`` (-1 where ``x`` is 0)."""
    return np.bitwise_count(_smear(x, width)).astype(np.int32) - 1


def _count(ctx: Ctx, frame, ins: Instruction):
    ptype = _bits_type(ins)
    width = size_of(ptype) * 8
    udt = int_dtype(size_of(ptype))
    op = ins.opcode
    if op == "popc":
        return elementwise(ctx, frame, ins, lambda a: np.bitwise_count(
            np.asarray(a).astype(udt)).astype(np.uint32), "u32", (ptype,))
    if op == "clz":
        return elementwise(ctx, frame, ins, lambda a: (width - 1 - msb_index(
            np.asarray(a).astype(udt), width)).astype(np.uint32), "u32", (ptype,))
    if op == "brev":
        def brev(a):
            raw = np.ascontiguousarray(np.asarray(a).astype(udt))
            flipped = _REV8[raw.view(np.uint8)].view(udt)
            return flipped.byteswap()
        return elementwise(ctx, frame, ins, brev, ptype, (ptype,))
    signed = is_signed(ptype)
    shiftamt = "shiftamt" in ins.flags

    def bfind(a):
        a = np.asarray(a)
        u = np.where(a < 0, ~a, a).astype(udt) if signed else a.astype(udt)
        pos = msb_index(u, width)
        if shiftamt:
            pos = np.where(pos < 0, -1, width - 1 - pos)
        return pos.astype(np.int64).astype(np.uint32)
    return elementwise(ctx, frame, ins, bfind, "u32", (ptype,))


def _field_mask(length: np.ndarray, udt) -> np.ndarray:
    width = udt.itemsize * 8
    ones = udt.type(np.iinfo(udt).max)
    length = np.asarray(length, np.int64)
    mask = (np.left_shift(np.uint64(1), np.minimum(length, 63).astype(np.uint64))
            - np.uint64(1)).astype(udt)
    return np.where(length >= width, ones, mask)


def _bfe(ctx: Ctx, frame, ins: Instruction):
    ptype = _bits_type(ins)
    dt = dtype_of(ptype)
    udt = bits_dtype(dt)
    width = dt.itemsize * 8
    signed = is_signed(ptype)

    def bfe(a, b, c):
        pos = np.asarray(b, np.int64) & 0xFF
        length = np.asarray(c, np.int64) & 0xFF
        ua = np.asarray(a).astype(udt) if np.ndim(a) else np.asarray([a]).astype(udt)
        field = np.right_shift(ua, np.minimum(pos, width).astype(udt))
        keep = np.clip(np.minimum(length, width - pos), 0, width)
        mask = _field_mask(keep, udt)
        out = field & mask
        if signed:
            top = np.clip(np.minimum(pos + length - 1, width - 1), 0, width - 1)
            sbit = (np.right_shift(ua, top.astype(udt)) & udt.type(1)).astype(bool) & \
                (length != 0)
            out = np.where(sbit, out | ~mask, out)
        return out.view(dt) if out.ndim else out
    return elementwise(ctx, frame, ins, bfe, ptype, (ptype, "u32", "u32"))


def _bfi(ctx: Ctx, frame, ins: Instruction):
    ptype = _bits_type(ins)
    dt = dtype_of(ptype)
    udt = bits_dtype(dt)
    width = dt.itemsize * 8

    def bfi(a, b, c, e):
        pos = np.asarray(c, np.int64) & 0xFF
        length = np.asarray(e, np.int64) & 0xFF
        keep = np.clip(np.minimum(length, width - pos), 0, width)
        shift = np.minimum(pos, width - 1).astype(udt)
        mask = np.where(pos >= width, udt.type(0), _field_mask(keep, udt) << shift)
        ua, ub = np.asarray(a).astype(udt), np.asarray(b).astype(udt)
        return ((ub & ~mask) | ((ua << shift) & mask)).astype(udt).view(dt)
    return elementwise(ctx, frame, ins, bfi, ptype, (ptype, ptype, "u32", "u32"))


def _bmsk(ctx: Ctx, frame, ins: Instruction):
    wrap = "wrap" in ins.flags

    def bmsk(a, b):
        pos, length = np.asarray(a, np.int64), np.asarray(b, np.int64)
        if wrap:
            pos, length = pos & 31, length & 31
        else:
            pos, length = np.minimum(pos, 32), np.minimum(length, 32)
        field = _field_mask(np.minimum(length, 32 - pos), np.dtype(np.uint32))
        return np.where(pos >= 32, np.uint32(0),
                        (field.astype(np.uint64) << np.minimum(pos, 31).astype(np.uint64))
                        .astype(np.uint32))
    return elementwise(ctx, frame, ins, bmsk, "b32", ("u32", "u32"))


def _szext(ctx: Ctx, frame, ins: Instruction):
    ptype = ins.type
    signed = ptype == "s32"
    wrap = "wrap" in ins.flags

    def szext(a, b):
        n = np.asarray(b, np.int64)
        n = n & 31 if wrap else np.minimum(n, 32)
        mask = _field_mask(n, np.dtype(np.uint32))
        ua = np.asarray(a).astype(np.uint32) & mask
        if signed:
            top = np.maximum(n - 1, 0).astype(np.uint32)
            sbit = ((ua >> top) & np.uint32(1)).astype(bool) & (n > 0) & (n < 32)
            ua = np.where(sbit, ua | ~mask, ua)
        return ua.view(dtype_of(ptype)) if np.ndim(ua) else ua
    return elementwise(ctx, frame, ins, szext, ptype, (ptype, "u32"))


def _prmt(ctx: Ctx, frame, ins: Instruction):
    mode = ins.mode

    def select(a, b, c):
        a64 = np.asarray(a).astype(np.uint64)
        b64 = np.asarray(b).astype(np.uint64)
        both = a64 | (b64 << np.uint64(32))
        c = np.asarray(c, np.uint32).astype(np.uint64)
        sels = _selectors(c, mode)
        out = np.zeros(np.broadcast(a64, b64, c).shape, np.uint64)
        for k, (sel, sign) in enumerate(sels):
            byte = (both >> (sel * np.uint64(8))) & np.uint64(0xFF)
            if sign is not None:
                rep = ((byte >> np.uint64(7)) & np.uint64(1)) * np.uint64(0xFF)
                byte = np.where(sign, rep, byte)
            out |= byte << np.uint64(8 * k)
        return out.astype(np.uint32)
    return elementwise(ctx, frame, ins, select, "b32", ("b32", "b32", "b32"))


def _selectors(c: np.ndarray, mode: str | None) -> list:
    """Per result byte: (source byte index 0-7, replicate-sign flag or None)."""
    seven = np.uint64(7)
    if mode is None:
        return [((c >> np.uint64(4 * k)) & seven,
                 ((c >> np.uint64(4 * k + 3)) & np.uint64(1)).astype(bool)) for k in range(4)]
    low = c & np.uint64(3)
    u = np.uint64
    if mode == "f4e":
        return [((low + u(k)) & seven, None) for k in range(4)]
    if mode == "b4e":
        return [((u(8) + low - u(k)) & seven, None) for k in range(4)]
    if mode == "rc8":
        return [(low, None)] * 4
    if mode == "ecl":
        return [(np.maximum(low, u(k)), None) for k in range(4)]
    if mode == "ecr":
        return [(np.minimum(low, u(k)), None) for k in range(4)]
    if mode == "rc16":
        one = low & u(1)
        return [(one * u(2) + u(k & 1), None) for k in range(4)]
    raise ValueError(mode)


def _lop3(ctx: Ctx, frame, ins: Instruction):
    from kerncast.ptx import Imm

    lut_op = ins.operands[4]
    if not isinstance(lut_op, Imm):
        raise unsupported(ins, "the lookup table must be an immediate")
    lut = int(lut_op.value) & 0xFF

    def lop3(a, b, c):
        a, b, c = (np.asarray(x, np.uint32) for x in (a, b, c))
        out = np.zeros(np.broadcast(a, b, c).shape, np.uint32)
        for k in range(8):
            if lut >> k & 1:
                ta = a if k & 4 else ~a
                tb = b if k & 2 else ~b
                tc = c if k & 1 else ~c
                out |= ta & tb & tc
        return out
    getters = [ctx.src(frame, op, "b32") for op in ins.operands[1:4]]
    write = ctx.dst(frame, ins.operands[0], "b32")
    ga, gb, gc = getters

    def fn(lanes):
        sl = lanes.sl
        write(lanes, lop3(ga(sl), gb(sl), gc(sl)))
    return fn


HANDLERS = {
    "and": _logic, "or": _logic, "xor": _logic, "not": _not, "cnot": _not, "shl": _shift,
    "shr": _shift, "shf": _shf, "popc": _count, "clz": _count, "brev": _count,
    "bfind": _count, "bfe": _bfe, "bfi": _bfi, "bmsk": _bmsk, "szext": _szext,
    "prmt": _prmt, "lop3": _lop3,
}

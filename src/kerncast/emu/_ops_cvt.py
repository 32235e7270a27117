"""Moves and conversions: mov (with vector packing), cvt between every integer and
float width with PTX's rounding and saturation rules.

Float-to-integer conversions saturate (NaN becomes 0) whether or not ``.sat`` is
given, as PTX specifies; integer-to-float and float-to-float conversions round in
the instruction's mode exactly (64-bit integers included).
"""

from __future__ import annotations

import numpy as np

from kerncast.emu._build import Ctx, elementwise, unsupported
from kerncast.emu._fround import from_half_bits, ftz, round64, round_to, to_bf16_bits
from kerncast.emu._types import dtype_of, int_dtype, size_of
from kerncast.ptx import Instruction, Sink, Vector

__all__ = ["HANDLERS", "convert"]

_F64 = np.float64
_INT = frozenset(("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "b8", "b16", "b32",
                  "b64"))
_HALF = frozenset(("f16", "bf16"))
_INT_ROUND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}
_TWO63 = _F64(2.0 ** 63)
_TWO64 = _F64(2.0 ** 64)


def _mov(ctx: Ctx, frame, ins: Instruction):
    ptype = ins.type
    dst, src = ins.operands
    if isinstance(src, Vector):
        return _pack(ctx, frame, ins, ptype, dst, src)
    if isinstance(dst, Vector):
        return _unpack(ctx, frame, ins, ptype, dst, src)
    storage = {"f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32"}.get(ptype, ptype)
    get = ctx.src(frame, src, storage)
    write = ctx.dst(frame, dst, storage)

    def mov(lanes):
        write(lanes, get(lanes.sl))
    return mov


def _pack(ctx: Ctx, frame, ins: Instruction, ptype: str, dst, src: Vector):
    size = size_of(ptype)
    count = len(src.elements)
    part = size // count
    if part * count != size or part not in (1, 2, 4):
        raise unsupported(ins, "vector does not fill the destination")
    ptype_part = {1: "b8", 2: "b16", 4: "b32"}[part]
    getters = [ctx.src(frame, e, ptype_part, narrow=True) for e in src.elements]
    wide = int_dtype(size)
    write = ctx.dst(frame, dst, {2: "b16", 4: "b32", 8: "b64"}[size])

    def pack(lanes):
        sl = lanes.sl
        out = None
        for k, g in enumerate(getters):
            v = np.asarray(g(sl)).astype(wide) << wide.type(8 * part * k)
            out = v if out is None else out | v
        write(lanes, out)
    return pack


def _unpack(ctx: Ctx, frame, ins: Instruction, ptype: str, dst: Vector, src):
    size = size_of(ptype)
    count = len(dst.elements)
    part = size // count
    if part * count != size or part not in (1, 2, 4):
        raise unsupported(ins, "vector does not fill the source")
    ptype_part = {1: "b8", 2: "b16", 4: "b32"}[part]
    get = ctx.src(frame, src, {2: "b16", 4: "b32", 8: "b64"}[size])
    writers = [None if isinstance(e, Sink) else ctx.dst(frame, e, ptype_part)
               for e in dst.elements]
    wide = int_dtype(size)
    narrow = dtype_of(ptype_part)

    def unpack(lanes):
        value = np.asarray(get(lanes.sl)).astype(wide)
        for k, write in enumerate(writers):
            if write is not None:
                write(lanes, (value >> wide.type(8 * part * k)).astype(narrow))
    return unpack


# -- cvt -------------------------------------------------------------------------


def _int_to_float_x64(a, atype: str):
    """(float64 value, error sign or None) of integers of type ``atype``."""
    a = np.asarray(a)
    x64 = a.astype(_F64)
    if size_of(atype) < 8:
        return x64, None
    if atype[0] == "s":
        sa = a.astype(np.int64)
        big = x64 >= _TWO63
        back = np.where(big, _F64(0), x64).astype(np.int64)
        return x64, np.where(big, -1, np.sign(sa - back))
    ua = a.astype(np.uint64)
    big = x64 >= _TWO64
    back = np.where(big, _F64(0), x64).astype(np.uint64)
    err = np.where(big, -1, np.where(ua > back, 1, np.where(ua < back, -1, 0)))
    return x64, err


def _float_to_int(x, dtype: str, rounding: str):
    """Round float values to integers of ``dtype`` and saturate (NaN -> 0)."""
    dt = dtype_of(dtype)
    x = _INT_ROUND[rounding](np.asarray(x, _F64))
    info = np.iinfo(dt)
    nan = np.isnan(x)
    lo, hi = _F64(info.min), _F64(info.max)
    if dt.itemsize < 8:
        return np.where(nan, 0, np.clip(x, lo, hi)).astype(dt)
    top = _TWO63 if dt.kind == "i" else _TWO64
    inner = np.where(nan | (x >= top) | (x < lo), 0, x).astype(dt)
    out = np.where(x >= top, dt.type(info.max), inner)
    return np.where(nan, dt.type(0), np.where(x < lo, dt.type(info.min), out))


def _saturate_int(a, atype: str, dtype: str):
    dt = dtype_of(dtype)
    info = np.iinfo(dt)
    a = np.asarray(a)
    if atype[0] == "u" or atype[0] == "b":
        ua = a.astype(np.uint64)
        hi = np.uint64(info.max)
        return np.minimum(ua, hi).astype(dt)
    sa = a.astype(np.int64)
    lo = np.int64(info.min)
    hi = np.int64(min(info.max, np.iinfo(np.int64).max))
    clipped = np.clip(sa, lo, hi)
    return clipped.astype(dt)


def _to_float_bits(x64, err, dtype: str, mode: str, relu: bool = False,
                   satfinite: bool = False):
    """float64 values (with error signs) rounded to ``dtype``'s storage."""
    if relu:
        x64 = np.where(np.isnan(x64), x64, np.maximum(x64, 0))
    if dtype == "f64":
        return round64(x64, err, mode)
    if dtype == "f32":
        return round_to(x64, err, mode, np.float32)
    if dtype == "f16":
        out = round_to(x64, err, mode, np.float16)
        if satfinite:
            big = np.float16(65504)
            out = np.where(np.isinf(out), np.copysign(big, out), out)
        return np.asarray(out).view(np.uint16)
    if dtype == "bf16":
        return to_bf16_bits(x64, err, mode)
    raise ValueError(dtype)


def _float_in(a, atype: str, flush: bool):
    if atype in _HALF:
        return np.asarray(from_half_bits(a, atype), _F64)
    a = np.asarray(a)
    if flush and atype == "f32":
        a = ftz(a)
    return a.astype(_F64)


def convert(a, atype: str, dtype: str, rounding: str | None, sat: bool, flush: bool,
            relu: bool = False, satfinite: bool = False):
    """``cvt`` of values ``a`` (of ``atype``) to ``dtype`` (float halves as bits)."""
    a_int, d_int = atype in _INT, dtype in _INT
    if a_int and d_int:
        if sat:
            return _saturate_int(a, atype, dtype)
        return np.asarray(a).astype(dtype_of(dtype))
    if a_int:
        x64, err = _int_to_float_x64(a, atype)
        out = _to_float_bits(x64, err, dtype, rounding or "rn", relu, satfinite)
        return _sat_float(out, dtype) if sat else out
    x = _float_in(a, atype, flush)
    if d_int:
        return _float_to_int(x, dtype, rounding or "rzi")
    if rounding in _INT_ROUND:
        x = _INT_ROUND[rounding](x)
        rounding = "rn"
    out = _to_float_bits(x, None, dtype, rounding or "rn", relu, satfinite)
    if sat:
        out = _sat_float(out, dtype)
    if flush and dtype == "f32":
        out = ftz(out)
    return out


def _sat_float(out, dtype: str):
    if dtype in ("f32", "f64"):
        out = np.asarray(out)
        return np.where(np.isnan(out), out.dtype.type(0), np.clip(out, 0, 1)).astype(out.dtype)
    values = from_half_bits(out, dtype).astype(_F64)
    values = np.where(np.isnan(values), 0, np.clip(values, 0, 1))
    return _to_float_bits(values, None, dtype, "rn")


def _cvt(ctx: Ctx, frame, ins: Instruction):
    if "pack" in ins.flags:
        raise unsupported(ins, "cvt.pack")
    if len(ins.types) != 2:
        raise unsupported(ins, "needs destination and source types")
    dtype, atype = ins.types
    if dtype == "tf32":
        return _tf32(ctx, frame, ins, atype)
    known = _INT | {"f16", "bf16", "f32", "f64"}
    if dtype not in known or atype not in known:
        raise unsupported(ins, f"conversion .{dtype}.{atype}")
    rounding = ins.rounding
    if rounding == "rna" or rounding == "rs":
        raise unsupported(ins, f"rounding .{rounding}")
    storage = {"f16": "b16", "bf16": "b16"}
    sat, flush = "sat" in ins.flags, "ftz" in ins.flags
    relu, satfinite = "relu" in ins.flags, "satfinite" in ins.flags
    get = ctx.src(frame, ins.operands[1], storage.get(atype, atype), narrow=True)
    write = ctx.dst(frame, ins.operands[0], storage.get(dtype, dtype))
    if atype == dtype and not (sat or flush or rounding in _INT_ROUND):
        return lambda lanes: write(lanes, get(lanes.sl))

    def cvt(lanes):
        write(lanes, convert(get(lanes.sl), atype, dtype, rounding, sat, flush, relu,
                             satfinite))
    return cvt


def _tf32(ctx: Ctx, frame, ins: Instruction, atype: str):
    if atype != "f32":
        raise unsupported(ins, "tf32 from a type other than f32")

    def to_tf32(a):
        bits = np.asarray(a, np.float32).view(np.uint32)
        finite = np.isfinite(np.asarray(a, np.float32))
        rounded = (bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)
        return np.where(finite, rounded, bits)
    return elementwise(ctx, frame, ins, to_tf32, "b32", ("f32",))


HANDLERS = {"mov": _mov, "cvt": _cvt}

"""Floating-point arithmetic: add/sub/mul/fma/mad/div/rcp/sqrt/rsqrt, min/max/abs/neg
and the approximate transcendentals, for f32, f64, f16, f16x2, bf16 and bf16x2.

Rounding modes ``.rn/.rz/.rm/.rp`` are exact (see :mod:`kerncast.emu._fround`);
``.ftz`` flushes float32/float16 subnormal inputs and results to zero, ``.sat``
clamps results to [0, 1] (NaN to 0). The ``.approx`` functions (``sin``, ``cos``,
``ex2``, ``lg2``, ``tanh``, ``rsqrt``, ``rcp.approx``, ``sqrt.approx``,
``div.approx``/``div.full``) are computed in float64 and rounded once, which is
within PTX's documented error bounds.
"""

from __future__ import annotations

import numpy as np

from kerncast.emu._build import Ctx, unsupported
from kerncast.emu._fround import (
    err_sign_div, err_sign_sqrt, fma32, fma64, from_half_bits, ftz, round64, round_to,
    to_bf16_bits, two_prod, two_sum,
)
from kerncast.ptx import Instruction

__all__ = ["HANDLERS", "FLOAT_TYPES"]

FLOAT_TYPES = frozenset(("f16", "f16x2", "bf16", "bf16x2", "f32", "f64"))
_F64 = np.float64
_STORAGE = {"f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32", "f32": "f32",
            "f64": "f64"}


# -- exact kernels: float64 inputs -> (x64, err or None) -------------------------------


def _exact(op: str, args: list, want_err: bool):
    """The float64 result of ``op`` and its error sign (None when not wanted or exact).

    Rounding the float64 result to nearest is already correct for float32 and float16
    operands (and is the result for float64 ones); the directed modes need the sign
    of the error, which the error-free transformations give.
    """
    if op in ("add", "sub"):
        a, b = args
        b = -b if op == "sub" else b
        return two_sum(a, b) if want_err else (a + b, None)
    if op == "mul":
        a, b = args
        return two_prod(a, b) if want_err else (a * b, None)
    if op in ("div", "rcp"):
        a, b = (args if op == "div" else (_F64(1.0), args[0]))
        q = a / b
        return q, (err_sign_div(a, b, q) if want_err else None)
    if op == "sqrt":
        (a,) = args
        q = np.sqrt(a)
        return q, (err_sign_sqrt(a, q) if want_err else None)
    raise ValueError(op)


_APPROX = {
    "sin": np.sin, "cos": np.cos, "ex2": np.exp2, "lg2": np.log2, "tanh": np.tanh,
    "rsqrt": lambda a: 1.0 / np.sqrt(a), "rcp": lambda a: 1.0 / a, "sqrt": np.sqrt,
    "div": lambda a, b: a / b,
}


def _sat(x):
    return np.where(np.isnan(x), x.dtype.type(0), np.clip(x, 0, 1)).astype(x.dtype)


class _Format:
    """How one float type is read, computed and written."""

    def __init__(self, ptype: str) -> None:
        self.ptype = ptype
        self.scalar = ptype.replace("x2", "")
        self.packed = ptype.endswith("x2")
        self.storage = _STORAGE[ptype]

    def halves(self, raw):
        """Packed operands: (low, high) float32 values; otherwise ([value],)."""
        if self.scalar in ("f32", "f64"):
            return [raw]
        raw = np.asarray(raw)
        if not self.packed:
            return [from_half_bits(raw, self.scalar)]
        raw = raw.astype(np.uint32)
        lo = (raw & np.uint32(0xFFFF)).astype(np.uint16)
        hi = (raw >> np.uint32(16)).astype(np.uint16)
        return [from_half_bits(lo, self.scalar), from_half_bits(hi, self.scalar)]

    def pack(self, parts: list, errs: list, mode: str):
        """Round each part to the format and pack (returns the stored value)."""
        if self.scalar == "f64":
            return round64(parts[0], errs[0], mode)
        if self.scalar == "f32":
            return round_to(parts[0], errs[0], mode, np.float32)
        bits = []
        for x, e in zip(parts, errs):
            if self.scalar == "f16":
                bits.append(round_to(x, e, mode, np.float16).view(np.uint16)
                            if np.ndim(x) else np.float16(x).view(np.uint16))
            else:
                bits.append(to_bf16_bits(x, e, mode))
        if not self.packed:
            return bits[0]
        return (np.asarray(bits[0]).astype(np.uint32) |
                (np.asarray(bits[1]).astype(np.uint32) << np.uint32(16)))


def _float_type(ins: Instruction) -> str:
    ptype = ins.type
    if ptype not in FLOAT_TYPES:
        raise unsupported(ins, f"type .{ptype}")
    return ptype


def _rounding(ins: Instruction) -> str:
    mode = ins.rounding or "rn"
    if mode not in ("rn", "rz", "rm", "rp"):
        raise unsupported(ins, f"rounding .{mode}")
    return mode


def _make(ctx: Ctx, frame, ins: Instruction, nsrc: int, compute):
    """Closure reading ``nsrc`` sources in the instruction's format, writing compute(...)."""
    ptype = _float_type(ins)
    fmt = _Format(ptype)
    getters = [ctx.src(frame, op, fmt.storage) for op in ins.operands[1:1 + nsrc]]
    write = ctx.dst(frame, ins.operands[0], fmt.storage)
    flush = "ftz" in ins.flags and fmt.scalar in ("f32", "f16")
    sat = "sat" in ins.flags

    def fn(lanes):
        sl = lanes.sl
        raws = [g(sl) for g in getters]
        if fmt.scalar in ("f32", "f64") and not flush:
            result = compute(fmt, raws)
        else:
            if flush and fmt.scalar == "f32":
                raws = [ftz(r) for r in raws]
            result = compute(fmt, raws)
            if flush and fmt.scalar == "f32":
                result = ftz(result)
        if sat:
            result = _saturate(fmt, result)
        write(lanes, result)
    return fn


def _saturate(fmt: _Format, result):
    if fmt.scalar in ("f32", "f64"):
        return _sat(np.asarray(result))
    parts = fmt.halves(result)
    return fmt.pack([_sat(np.asarray(p, np.float32)).astype(_F64) for p in parts],
                    [None] * len(parts), "rn")


def _arith(ctx: Ctx, frame, ins: Instruction):
    """add, sub, mul, div (rounded), rcp.rn, sqrt.rn."""
    op = ins.opcode
    ptype = _float_type(ins)
    if ("approx" in ins.flags or "full" in ins.flags) and op in ("div", "rcp", "sqrt"):
        return _approx(ctx, frame, ins)
    mode = _rounding(ins)
    nsrc = 1 if op in ("rcp", "sqrt") else 2
    fast = {"add": np.add, "sub": np.subtract, "mul": np.multiply}.get(op)
    if ptype == "f32" and mode == "rn" and fast is not None and "ftz" not in ins.flags \
            and "sat" not in ins.flags:
        from kerncast.emu._build import ufunc_op

        return ufunc_op(ctx, frame, ins, fast, "f32")
    if ptype == "f64" and mode == "rn" and fast is not None:
        from kerncast.emu._build import ufunc_op

        return ufunc_op(ctx, frame, ins, fast, "f64")
    want_err = mode != "rn"

    def compute(fmt: _Format, raws):
        columns = [fmt.halves(r) for r in raws]
        parts, errs = [], []
        for k in range(len(columns[0])):
            args = [np.asarray(col[k], _F64) for col in columns]
            x, e = _exact(op, args, want_err)
            parts.append(x)
            errs.append(e)
        return fmt.pack(parts, errs, mode)
    return _make(ctx, frame, ins, nsrc, compute)


def _fma(ctx: Ctx, frame, ins: Instruction):
    ptype = _float_type(ins)
    mode = _rounding(ins)
    if ins.opcode == "mad" and ins.rounding is None and ptype == "f32" \
            and "ftz" not in ins.flags:
        mode = "rn"

    def compute(fmt: _Format, raws):
        if fmt.scalar == "f32":
            return fma32(raws[0], raws[1], raws[2], mode)
        if fmt.scalar == "f64":
            return fma64(raws[0], raws[1], raws[2], mode)
        columns = [fmt.halves(r) for r in raws]
        parts, errs = [], []
        for k in range(len(columns[0])):
            a, b, c = (np.asarray(col[k], _F64) for col in columns)
            s, e = two_sum(a * b, c)
            parts.append(s)
            errs.append(e)
        return fmt.pack(parts, errs, mode)
    return _make(ctx, frame, ins, 3, compute)


def _approx(ctx: Ctx, frame, ins: Instruction):
    op = ins.opcode
    func = _APPROX.get(op)
    if func is None:
        raise unsupported(ins)
    nsrc = 2 if op == "div" else 1

    def compute(fmt: _Format, raws):
        columns = [fmt.halves(r) for r in raws]
        parts = []
        for k in range(len(columns[0])):
            args = [np.asarray(col[k], _F64) for col in columns]
            parts.append(func(*args))
        if fmt.scalar == "f64":
            return np.asarray(parts[0], _F64)
        return fmt.pack(parts, [None] * len(parts), "rn")
    return _make(ctx, frame, ins, nsrc, compute)


def _minmax(ctx: Ctx, frame, ins: Instruction):
    is_min = ins.opcode == "min"
    keep_nan = "NaN" in ins.flags
    base = np.minimum if keep_nan else (np.fmin if is_min else np.fmax)
    if not is_min and keep_nan:
        base = np.maximum

    def pick(a, b):
        r = base(a, b)
        zeros = (a == 0) & (b == 0)
        if np.any(zeros):
            neg = (np.signbit(a) | np.signbit(b)) if is_min else (np.signbit(a) & np.signbit(b))
            r = np.where(zeros, np.where(neg, -np.abs(r), np.abs(r)), r)
        return r

    def compute(fmt: _Format, raws):
        columns = [fmt.halves(r) for r in raws]
        parts = []
        for k in range(len(columns[0])):
            a, b = (np.asarray(col[k]) for col in columns)
            r = pick(a, b)
            for extra in columns[2:]:
                r = pick(r, np.asarray(extra[k]))
            parts.append(np.asarray(r, _F64) if fmt.scalar not in ("f32", "f64") else r)
        if fmt.scalar in ("f32", "f64"):
            return parts[0]
        return fmt.pack(parts, [None] * len(parts), "rn")
    return _make(ctx, frame, ins, len(ins.operands) - 1, compute)


def _absneg(ctx: Ctx, frame, ins: Instruction):
    ptype = _float_type(ins)
    is_abs = ins.opcode == "abs"
    if ptype in ("f32", "f64") and "ftz" not in ins.flags:
        from kerncast.emu._build import ufunc_op

        return ufunc_op(ctx, frame, ins, np.abs if is_abs else np.negative, ptype)
    bit = {"f16": 0x8000, "bf16": 0x8000, "f16x2": 0x80008000, "bf16x2": 0x80008000}

    def compute(fmt: _Format, raws):
        (raw,) = raws
        if fmt.scalar in ("f32", "f64"):
            return np.abs(raw) if is_abs else np.negative(raw)
        dt = np.uint32 if fmt.packed else np.uint16
        sign = dt(bit[fmt.ptype])
        raw = np.asarray(raw).astype(dt)
        return (raw & ~sign) if is_abs else (raw ^ sign)
    return _make(ctx, frame, ins, 1, compute)


def _div_dispatch(ctx: Ctx, frame, ins: Instruction):
    if ins.type in FLOAT_TYPES:
        return _arith(ctx, frame, ins)
    raise unsupported(ins)


def _sfu(ctx: Ctx, frame, ins: Instruction):
    """sin/cos/ex2/lg2/tanh/rsqrt: always approximate."""
    _float_type(ins)
    return _approx(ctx, frame, ins)


HANDLERS = {
    "add": _arith, "sub": _arith, "mul": _arith, "div": _div_dispatch, "rcp": _arith,
    "sqrt": _arith, "fma": _fma, "mad": _fma, "min": _minmax, "max": _minmax, "abs": _absneg,
    "neg": _absneg, "sin": _sfu, "cos": _sfu, "ex2": _sfu, "lg2": _sfu, "tanh": _sfu,
    "rsqrt": _sfu,
}

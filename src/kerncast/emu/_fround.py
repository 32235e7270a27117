"""Exact float arithmetic helpers: error-free transformations and rounding modes.

Single-precision (and half-precision) results are computed in float64 and rounded
once: for ``+ - * / sqrt`` of float32 operands this is correctly rounded (float64
has more than twice float32's precision plus two bits, so double rounding is
innocuous, Figueroa 1995). Where an intermediate float64 value ``x`` is not exact
(``fma``, sums of wide-ranging values), the sign of the error ``X - x`` is known
from an error-free transformation and :func:`round_to` uses it to round ``X``
itself correctly in any mode: round-to-nearest fixes the rare ``x`` that sits
exactly on a midpoint of the target format; the directed modes (``rz``, ``rm``,
``rp``) step to the neighbour on the right side. Double-precision results use
TwoSum / TwoProduct (Dekker) and, for ``fma``, Boldo and Melquiond's emulation with
rounding to odd ("Emulation of FMA and correctly rounded sums: proved algorithms
using rounding to odd", IEEE TC 2008).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "two_sum", "two_prod", "round_to", "round64", "fma32", "fma64", "ftz", "from_half_bits",
    "to_bf16_bits", "err_sign_div", "err_sign_sqrt", "round_odd64",
]

_F64 = np.float64
_SPLIT = _F64(134217729.0)  # 2**27 + 1
_INF = _F64(np.inf)
_TINY32 = np.float32(np.finfo(np.float32).tiny)
_TINY16 = np.float16(np.finfo(np.float16).tiny)
_MID_MASK = np.uint64((1 << 29) - 1)
_MID_BITS = np.uint64(1 << 28)
_SUB32 = _F64(np.finfo(np.float32).tiny)


def two_sum(a, b):
    """``(s, e)`` with ``s = RN(a + b)`` and ``a + b = s + e`` exactly (finite inputs)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _split(a):
    c = _SPLIT * a
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a, b):
    """``(p, e)`` with ``p = RN(a * b)`` and ``a * b = p + e`` exactly (no over/underflow)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _sign_of(diff, err):
    """sign(X - r) from the float64 difference ``x - r`` and the error sign of ``x``."""
    s = np.sign(diff)
    s = np.where(np.isnan(s), 0, s)
    if err is not None:
        s = np.where(s == 0, np.sign(np.nan_to_num(err)), s)
    return s


def round_to(x64, err, mode: str, dtype=np.float32):
    """Round ``X = x64 + err`` (``err`` None when ``x64`` is exact) to ``dtype`` in ``mode``."""
    dtype = np.dtype(dtype)
    x64 = np.asarray(x64, _F64)
    r = x64.astype(dtype)
    if mode in ("rn", None):
        if err is None:
            return r
        back = r.astype(_F64)
        diff = x64 - back
        cand = (np.asarray(err) != 0) & (diff != 0)
        if not cand.any():
            return r
        toward = np.where(diff > 0, dtype.type(np.inf), dtype.type(-np.inf))
        nb = np.nextafter(r, toward).astype(_F64)
        mid = cand & ((nb - back) == 2 * diff)
        if not mid.any():
            return r
        upper, lower = np.maximum(back, nb), np.minimum(back, nb)
        fixed = np.where(np.asarray(err) > 0, upper, lower).astype(dtype)
        return np.where(mid, fixed, r)
    s = _sign_of(x64 - r.astype(_F64), err)
    if mode == "rz":
        step = ((r > 0) & (s < 0)) | ((r < 0) & (s > 0))
        target = dtype.type(0)
    elif mode == "rm":
        step, target = s < 0, dtype.type(-np.inf)
    elif mode == "rp":
        step, target = s > 0, dtype.type(np.inf)
    else:
        raise ValueError(mode)
    if not np.any(step):
        return r
    return np.where(step, np.nextafter(r, target), r)


def round64(x64, err, mode: str):
    """Directed rounding of ``X = x64 + err`` to float64 (``x64 = RN(X)``)."""
    if mode in ("rn", None) or err is None:
        return x64
    err = np.nan_to_num(np.asarray(err, _F64))
    if mode == "rz":
        step = ((x64 > 0) & (err < 0)) | ((x64 < 0) & (err > 0))
        target = _F64(0)
    elif mode == "rm":
        step, target = err < 0, -_INF
    else:
        step, target = err > 0, _INF
    return np.where(step, np.nextafter(x64, target), x64)


def round_odd64(s, e):
    """Round-to-odd of ``s + e`` (``s = RN(s + e)``) in float64."""
    bits = np.asarray(s, _F64).view(np.int64)
    even = (bits & 1) == 0
    fix = (np.asarray(e) != 0) & even
    if not np.any(fix):
        return s
    return np.where(fix, np.nextafter(s, np.where(np.asarray(e) > 0, _INF, -_INF)), s)


class _Exactness:
    """Whether fused multiply-adds are rounded exactly (slow) or as one float64
    ``a * b + c`` rounded once more (fast, off by an ulp in rare ties: for timing runs)."""

    exact = True


EXACTNESS = _Exactness()


def fma32(a, b, c, mode: str = "rn"):
    """Single-rounded ``a * b + c`` of float32 values, in ``mode``."""
    if mode == "rn" and not EXACTNESS.exact:  # the same float64 sum, in fewer steps
        return np.add(np.multiply(a, b, dtype=_F64), c, dtype=_F64).astype(np.float32)
    a64 = np.asarray(a, _F64)
    p = a64 * np.asarray(b, _F64)
    c64 = np.asarray(c, _F64)
    s = p + c64
    if mode == "rn":
        r = s.astype(np.float32)
        bits = s.view(np.uint64) if s.ndim else np.asarray([s]).view(np.uint64)
        # a sum of exactly zero is exact (the product is exact in float64)
        risky = ((bits & _MID_MASK) == _MID_BITS).any() or \
            ((np.abs(s) < _SUB32) & (s != 0)).any()
        if not risky:
            return r
    _, e = two_sum(p, c64)
    return round_to(s, e, mode, np.float32)


def fma64(a, b, c, mode: str = "rn"):
    """Correctly rounded ``a * b + c`` in float64 (Boldo-Melquiond; rounding to odd).

    With ``EXACTNESS.exact`` off (emulating for timing only) it is ``a * b + c``."""
    a, b, c = (np.asarray(x, _F64) for x in (a, b, c))
    if not EXACTNESS.exact and mode == "rn":
        return a * b + c
    ph, pl = two_prod(a, b)
    th, tl = two_sum(c, ph)
    v_s, v_e = two_sum(tl, pl)
    v = round_odd64(v_s, v_e)
    z = th + v
    bad = ~np.isfinite(z) | ~np.isfinite(ph) | ~np.isfinite(pl)
    if np.any(bad):
        z = np.where(bad, a * b + c, z)
    if mode == "rn":
        return z
    err = (th - z) + v
    return round64(z, np.where(bad, 0.0, err), mode)


def ftz(x):
    """Flush subnormal float32 (or float16) values to sign-preserving zero."""
    x = np.asarray(x)
    tiny = _TINY16 if x.dtype == np.float16 else _TINY32
    return np.where(np.abs(x) < tiny, np.copysign(x.dtype.type(0), x), x)


def err_sign_div(a64, b64, q64):
    """sign(a/b - q) for the float64 quotient ``q`` of ``a`` and ``b`` (exact)."""
    ph, pl = two_prod(q64, b64)
    rem = (a64 - ph) - pl
    return np.sign(rem) * np.sign(b64)


def err_sign_sqrt(a64, q64):
    """sign(sqrt(a) - q) for the float64 root ``q`` of ``a`` (exact)."""
    ph, pl = two_prod(q64, q64)
    return np.sign((a64 - ph) - pl)


def from_half_bits(bits, kind: str):
    """Float32 values of 16-bit ``f16`` or ``bf16`` bit patterns."""
    bits = np.asarray(bits).astype(np.uint16)
    if kind == "f16":
        return bits.view(np.float16).astype(np.float32)
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def to_bf16_bits(x64, err, mode: str = "rn"):
    """Bits of ``X = x64 + err`` rounded to bfloat16 (through float32 rounded to odd)."""
    x64 = np.asarray(x64, _F64)
    r = x64.astype(np.float32)
    s = _sign_of(x64 - r.astype(_F64), err)
    odd = (r.view(np.uint32) & np.uint32(1)) == 1 if r.ndim else bool(r.view(np.uint32) & 1)
    fix = (s != 0) & ~odd & np.isfinite(r)
    r = np.where(fix, np.nextafter(r, np.where(s > 0, np.float32(np.inf),
                                               np.float32(-np.inf))), r)
    u = np.asarray(r, np.float32).view(np.uint32).astype(np.uint64)
    low = u & np.uint64(0xFFFF)
    neg = (u >> np.uint64(31)) == 1
    if mode in ("rn", None):
        rounded = (u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) >> \
            np.uint64(16)
    elif mode == "rz":
        rounded = u >> np.uint64(16)
    else:
        up = (low != 0) & (neg if mode == "rm" else ~neg)
        rounded = (u >> np.uint64(16)) + up.astype(np.uint64)
    nan = np.isnan(np.asarray(r))
    rounded = np.where(nan, (u >> np.uint64(16)) | np.uint64(0x40), rounded)
    return rounded.astype(np.uint16)

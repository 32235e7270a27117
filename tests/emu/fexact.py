"""Exact reference rounding of rationals to float16/32/64 in PTX's four modes."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


def _candidates(x: Fraction, dtype) -> list:
    near = dtype(float(x)) if abs(x) < Fraction(10) ** 300 else dtype(math.copysign(np.inf, x))
    out = {near, np.nextafter(near, dtype(np.inf)), np.nextafter(near, dtype(-np.inf))}
    return sorted(v for v in out if np.isfinite(v))


def round_exact(x: Fraction, mode: str, dtype=np.float32):
    """``x`` rounded to ``dtype`` in mode rn (ties to even), rz, rm or rp."""
    dtype = np.dtype(dtype).type
    if x == 0:
        return dtype(0.0)
    cands = _candidates(x, dtype)
    below = [c for c in cands if Fraction(float(c)) <= x]
    above = [c for c in cands if Fraction(float(c)) >= x]
    lo = max(below, key=lambda c: Fraction(float(c))) if below else dtype(-np.inf)
    hi = min(above, key=lambda c: Fraction(float(c))) if above else dtype(np.inf)
    if lo == hi:
        return lo
    if mode == "rm":
        return lo
    if mode == "rp":
        return hi
    if mode == "rz":
        return lo if x > 0 else hi
    if not np.isfinite(lo) or not np.isfinite(hi):
        return hi if np.isfinite(lo) and x > 0 else lo
    dlo, dhi = x - Fraction(float(lo)), Fraction(float(hi)) - x
    if dlo != dhi:
        return lo if dlo < dhi else hi
    bits = np.array([lo], dtype).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[
        np.dtype(dtype).itemsize])[0]
    return lo if int(bits) % 2 == 0 else hi


def F(value) -> Fraction:
    return Fraction(float(value))


def same(a, b) -> bool:
    """Bitwise equality of two floats (NaNs equal to NaNs)."""
    a, b = np.asarray(a), np.asarray(b)
    if np.isnan(a) and np.isnan(b):
        return True
    return a.tobytes() == b.astype(a.dtype).tobytes()

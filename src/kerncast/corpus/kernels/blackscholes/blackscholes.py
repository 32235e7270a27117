"""Inputs and NumPy reference for the Black-Scholes kernel.

A book of European options on many underlyings: spot prices log-normal around 100,
strikes within +-30% of the spot, maturities from two weeks to three years; one
risk-free rate and one volatility for the book (the spec's r and v). The cumulative
normal is the Abramowitz-Stegun polynomial 26.2.17 (error < 7.5e-8), in the kernels
and here alike, so that the check compares arithmetic, not approximations.
"""

import numpy as np

from kerncast.core import advanced, chunked_together, stream_words

CHUNK = 1 << 20  # options per step (cache-sized)
PIECE = 1 << 14  # options made at once where an emulation reaches them (divides CHUNK)
A = (0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429)
P = 0.2316419
INV_SQRT_2PI = 0.3989422804014327


def _uniform(raw, lo, hi):
    """Floats in [lo, hi) from the top 24 bits of 32-bit random words."""
    return lo + (hi - lo) * ((raw >> np.uint32(8)).astype(np.float32) * np.float32(2.0**-24))


def _options(start, n, k):
    """Options ``k * PIECE`` up to ``(k + 1) * PIECE``. A step of CHUNK options draws two
    64-bit words an option, and reads them as four rows of 32-bit words: spot (two
    uniforms), strike, maturity."""
    lo, hi = k * PIECE, min(n, (k + 1) * PIECE)
    first = lo // CHUNK * CHUNK
    width = min(n, first + CHUNK) - first
    row = [stream_words(start, 4 * first + q * width + lo - first, hi - lo) for q in range(4)]
    spot = 100.0 * np.exp(np.float32(0.4) * (_uniform(row[0], 0, 1) + _uniform(row[1], 0, 1) - 1))
    return {"spot": spot, "strike": spot * _uniform(row[2], 0.7, 1.3),
            "years": _uniform(row[3], 0.04, 3.0)}


def inputs(kernel, params, rng):
    n, start = params["n"], advanced(rng, 0)
    return chunked_together({name: (np.float32, n, PIECE) for name in ("spot", "strike", "years")},
                            lambda k: _options(start, n, k))


def cnd(d):
    """Cumulative standard normal by the Abramowitz-Stegun polynomial (float64)."""
    k = 1.0 / (1.0 + P * np.abs(d))
    poly = k * (A[0] + k * (A[1] + k * (A[2] + k * (A[3] + k * A[4]))))
    tail = INV_SQRT_2PI * np.exp(-0.5 * d * d) * poly
    return np.where(d > 0, 1.0 - tail, tail)


def reference(kernel, args, params):
    r, v = float(np.float32(params["r"])), float(np.float32(params["v"]))
    n = args["spot"].size
    call, put = np.empty(n, dtype=np.float32), np.empty(n, dtype=np.float32)
    for lo in range(0, n, CHUNK):
        s = args["spot"][lo:lo + CHUNK].astype(np.float64)
        x = args["strike"][lo:lo + CHUNK].astype(np.float64)
        t = args["years"][lo:lo + CHUNK].astype(np.float64)
        vol_t = v * np.sqrt(t)
        d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / vol_t
        d2 = d1 - vol_t
        n1, n2 = cnd(d1), cnd(d2)
        disc = x * np.exp(-r * t)
        call[lo:lo + CHUNK] = s * n1 - disc * n2
        put[lo:lo + CHUNK] = disc * (1.0 - n2) - s * (1.0 - n1)
    return {"call": call, "put": put}

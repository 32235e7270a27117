"""Inputs and NumPy references for the arithmetic micro-benchmarks.

The fp32/fp64 chains a <- a*m + c are affine, so the reference evaluates them in closed
form (a_K = m^K (a_0 - f) + f with f = c / (1 - m)); with m = 0.99 the float32 rounding
error stays below 0.5 ulp / (1 - m) ~ 6e-6. The integer and transcendental chains have
no closed form: their inputs are drawn from a pool of distinct seeds, so the reference
iterates each distinct seed once and broadcasts the results to the elements. No output
depends on the launch: the elements per thread change the schedule, not the values.
"""

import numpy as np

POOL = 4096
CHUNK = 1 << 24


def _pooled(rng, n, values):
    return values[rng.integers(0, values.size, n)]


def _uniform32(rng, n):
    x = np.empty(n, np.float32)
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        x[start:stop] = rng.random(stop - start, dtype=np.float32) * 2 - 1
    return x


def inputs(kernel, params, rng):
    n = params["n"]
    if kernel == "arith_fp64":
        return {"x": rng.uniform(-1.0, 1.0, n)}
    if kernel == "arith_int32":
        pool = rng.integers(0, 1 << 32, POOL, dtype=np.uint64).astype(np.uint32)
        return {"x": _pooled(rng, n, pool)}
    if kernel == "arith_sfu":
        pool = rng.uniform(-2.0, 2.0, POOL).astype(np.float32)
        return {"x": _pooled(rng, n, pool)}
    return {"x": _uniform32(rng, n)}


def _affine(x, m, c, steps, dtype):
    """x after ``steps`` iterations of a <- a*m + c, evaluated in float64 by chunks."""
    m, c = float(m), float(c)
    fixed = c / (1.0 - m)
    scale = m ** int(steps)
    y = np.empty(x.size, dtype)
    for start in range(0, x.size, CHUNK):
        part = x[start:start + CHUNK].astype(np.float64)
        y[start:start + CHUNK] = scale * (part - fixed) + fixed
    return y


def _int_chain(seeds, iters, mul, add):
    h = seeds.copy()
    mul, add = np.uint32(mul), np.uint32(add)
    with np.errstate(over="ignore"):
        for _ in range(iters):
            h ^= h >> np.uint32(7)
            h = h * mul + add
            h ^= (h << np.uint32(9)) & np.uint32(0xA5A5A5A5)
            h += h >> np.uint32(13)
    return h


def _sfu_chain(seeds, iters):
    a = seeds.astype(np.float64)
    for _ in range(iters):
        q = a * a + 1.0
        a = (0.25 * np.sin(a) + 0.25 * np.cos(a) + 0.125 * np.log(q) + 0.125 * np.sqrt(q)
             + 0.125 / np.sqrt(q) + 0.125 * np.exp(-a * a))
    return a.astype(np.float32)


def _per_distinct(x, chain):
    seeds, inverse = np.unique(x, return_inverse=True)
    return chain(seeds)[inverse.reshape(-1)]


def reference(kernel, args, params):
    x = args["x"]
    if kernel == "arith_fp32":
        return {"y": _affine(x, args["m"], args["c"], args["iters"], np.float32)}
    if kernel == "arith_fp64":
        return {"y": _affine(x, args["m"], args["c"], args["iters"], np.float64)}
    if kernel == "arith_mixed":
        return {"y": _affine(x, args["m"], args["c"], args["fmas"], np.float32)}
    if kernel == "arith_int32":
        return {"y": _per_distinct(x, lambda s: _int_chain(s, int(args["iters"]), args["mul"],
                                                           args["add"]))}
    if kernel == "arith_sfu":
        return {"y": _per_distinct(x, lambda s: _sfu_chain(s, int(args["iters"])))}
    raise ValueError(f"unknown kernel {kernel}")

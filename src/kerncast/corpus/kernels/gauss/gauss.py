"""Inputs and NumPy reference for one Gaussian elimination step at pivot k.

The generator produces the state of a strictly diagonally dominant system after k
elimination steps: rows above k are finished (zeros left of the diagonal), the
columns left of k are zero below the diagonal, and every row's diagonal exceeds
the sum of the magnitudes of its other entries, so no pivoting is needed.
"""

import numpy as np

_CHUNK = 1 << 24  # matrix elements handled at a time


def _reduced_matrix(rng, n, k):
    a = rng.random(n * n, dtype=np.float32).reshape(n, n)
    a *= 2.0
    a -= 1.0
    a[k:, :k] = 0.0
    rows, cols = np.tril_indices(k, -1)
    a[rows, cols] = 0.0
    idx = np.arange(n)
    step = max(1, _CHUNK // n)
    for i in range(0, n, step):
        off = np.abs(a[i:i + step]).sum(axis=1, dtype=np.float64)
        off -= np.abs(a[idx[i:i + step], idx[i:i + step]])
        a[idx[i:i + step], idx[i:i + step]] = off + rng.uniform(1.0, 2.0, off.size)
    return a


def inputs(kernel, params, rng):
    n, k = params["n"], params["k"]
    a = _reduced_matrix(rng, n, k)
    if kernel == "gauss_multipliers":
        return {"a": a.reshape(-1)}
    mult = a[k + 1:, k] / a[k, k]  # float32 division, as the multipliers kernel does
    b = rng.uniform(-1.0, 1.0, n).astype(np.float32)
    return {"a": a.reshape(-1), "b": b, "mult": mult.astype(np.float32)}


def _update(a, b, mult, n, k):
    a = a.reshape(n, n).copy()
    pivot_row = a[k, k + 1:].astype(np.float64)
    m = mult.astype(np.float64)
    step = max(1, _CHUNK // n)
    for i in range(k + 1, n, step):
        block = a[i:i + step, k + 1:].astype(np.float64)
        block -= m[i - k - 1:i - k - 1 + step, None] * pivot_row
        a[i:i + step, k + 1:] = block
    a[k + 1:, k] = 0.0
    b = b.astype(np.float64)
    b[k + 1:] -= m * b[k]
    return a.reshape(-1), b.astype(np.float32)


def reference(kernel, args, params):
    n, k = params["n"], params["k"]
    a = args["a"].reshape(n, n)
    if kernel == "gauss_multipliers":
        return {"mult": (a[k + 1:, k].astype(np.float64) / float(a[k, k])).astype(np.float32)}
    new_a, new_b = _update(args["a"], args["b"], args["mult"], n, k)
    return {"a": new_a, "b": new_b}

"""Inputs and NumPy reference for the matvec kernels (y = A x, A m x n float32)."""

import numpy as np

_CHUNK = 1 << 24  # matrix elements converted to float64 at a time


def _uniform(rng, count):
    values = rng.random(count, dtype=np.float32)
    values *= 2.0
    values -= 1.0
    return values


def inputs(kernel, params, rng):
    m, n = params["m"], params["n"]
    # Entries i.i.d. in [-1, 1): the column-major copy is generated in its own layout
    # (at[k * m + i] = A[i, k]) rather than transposed, which would cost a full pass.
    name = "at" if kernel == "matvec_colmajor" else "a"
    return {name: _uniform(rng, m * n), "x": _uniform(rng, n)}


def _rows_times(a, x):
    step = max(1, _CHUNK // a.shape[1])
    return np.concatenate([a[i:i + step].astype(np.float64) @ x
                           for i in range(0, a.shape[0], step)])


def _cols_times(at, x):
    y = np.zeros(at.shape[1])
    step = max(1, _CHUNK // at.shape[1])
    for k in range(0, at.shape[0], step):
        y += x[k:k + step] @ at[k:k + step].astype(np.float64)
    return y


def reference(kernel, args, params):
    m, n = params["m"], params["n"]
    x = args["x"].astype(np.float64)
    if kernel == "matvec_colmajor":
        y = _cols_times(args["at"].reshape(n, m), x)
    else:
        y = _rows_times(args["a"].reshape(m, n), x)
    return {"y": y.astype(np.float32)}

"""Inputs and NumPy reference for the branch-divergence micro-benchmark.

The element classes come in runs of random length (mean 48), like the labels of a
segmented signal, so most warps of the data-dependent pattern see one or two classes.
Each branch is an affine recurrence, evaluated in closed form.
"""

import numpy as np

M = np.array([0.99, 0.98, 0.97, 0.96, 0.95, 0.94, 0.93, 0.92], np.float32)
C = np.array([0.01, 0.04, 0.09, 0.16, 0.25, 0.36, 0.49, 0.64], np.float32)
MEAN_RUN = 48


def _classes(rng, n):
    runs = rng.geometric(1.0 / MEAN_RUN, size=n // 16 + 16)  # about 3n elements in all
    labels = rng.integers(0, 8, runs.size, dtype=np.uint8)
    return np.resize(np.repeat(labels, runs), n)


def inputs(kernel, params, rng):
    n = params["n"]
    return {"x": rng.uniform(-1.0, 1.0, n).astype(np.float32), "cls": _classes(rng, n)}


def _branch(i, pattern, cls):
    if pattern == 0:
        return (i >> 10) & 7
    if pattern == 1:
        return (i >> 4) & 1
    if pattern == 2:
        return i & 1
    if pattern == 3:
        return i & 3
    if pattern == 4:
        return i & 7
    return cls.astype(np.int64) & 7


def reference(kernel, args, params):
    n, iters = int(args["n"]), int(args["iters"])
    b = _branch(np.arange(n, dtype=np.int64), int(args["pattern"]), args["cls"])
    m, c = M[b].astype(np.float64), C[b].astype(np.float64)
    fixed = c / (1.0 - m)
    y = m ** iters * (args["x"].astype(np.float64) - fixed) + fixed
    return {"y": y.astype(np.float32)}

"""Inputs and NumPy reference for the block-wise scan.

The input is a count per element (0..99, like the per-bucket counts a scan turns into
offsets); the segments depend on the launch (seg = bx * items elements each).
"""

import numpy as np

CHUNK = 1 << 24


def inputs(kernel, params, rng):
    n = params["n"]
    x = np.empty(n, np.int32)
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        x[start:stop] = rng.integers(0, 100, stop - start, dtype=np.int32)
    return {"x": x}


def reference(kernel, args, params):
    x, seg = args["x"], int(args["seg"])
    y = np.empty_like(x)
    full = x.size // seg * seg
    step = max(seg, CHUNK // seg * seg)
    for start in range(0, full, step):
        stop = min(full, start + step)
        rows = x[start:stop].reshape(-1, seg)
        y[start:stop] = np.cumsum(rows, axis=1, dtype=np.int32).reshape(-1)
    y[full:] = np.cumsum(x[full:], dtype=np.int32)
    return {"y": y}

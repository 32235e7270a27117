"""Inputs and NumPy references for the memory-access micro-benchmarks.

x holds random floats, so a copy that reads the wrong element is caught.
"""

import numpy as np

CHUNK = 1 << 24


def _random(rng, count):
    x = np.empty(count, np.float32)
    for start in range(0, count, CHUNK):
        stop = min(count, start + CHUNK)
        x[start:stop] = rng.random(stop - start, dtype=np.float32)
    return x


def _transpose(x, stride):
    """x viewed as (cols, stride), transposed, by blocks of about CHUNK / 16 elements."""
    cols = x.size // stride
    y = np.empty(x.size, x.dtype)
    rows_in, rows_out = x.reshape(cols, stride), y.reshape(stride, cols)
    step = max(1, (CHUNK >> 4) // stride)
    for start in range(0, cols, step):
        rows_out[:, start:start + step] = rows_in[start:start + step].T
    return y


def inputs(kernel, params, rng):
    n = params["n"]
    return {"x": _random(rng, n + 32 if kernel == "copy_offset" else n)}


def reference(kernel, args, params):
    x = args["x"]
    if kernel == "copy_strided":
        return {"y": _transpose(x, int(args["stride"]))}
    if kernel == "copy_offset":
        offset = int(args["offset"])
        return {"y": x[offset:offset + int(args["n"])]}
    if kernel == "copy_vector":
        return {"y": x}
    raise ValueError(f"unknown kernel {kernel}")

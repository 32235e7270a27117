"""Inputs and NumPy reference for the sum reductions.

The partial sums depend on the launch: block b sums the tile x[b * tile : (b + 1) * tile]
with tile = bx * items, so the reference reproduces that layout (in float64).
"""

import numpy as np

CHUNK = 1 << 24


def inputs(kernel, params, rng):
    n = params["n"]
    x = np.empty(n, np.float32)
    for start in range(0, n, CHUNK):  # non-negative readings: no cancellation in the sums
        stop = min(n, start + CHUNK)
        x[start:stop] = rng.random(stop - start, dtype=np.float32)
    return {"x": x}


def reference(kernel, args, params):
    x, tile = args["x"], int(args["tile"])
    blocks = -(-x.size // tile)
    partial = np.empty(blocks, np.float64)
    rows = max(1, CHUNK // tile)
    full = x.size // tile
    for first in range(0, full, rows):
        last = min(full, first + rows)
        part = x[first * tile:last * tile].reshape(last - first, tile)
        partial[first:last] = part.sum(axis=1, dtype=np.float64)
    if blocks > full:
        partial[full] = x[full * tile:].sum(dtype=np.float64)
    return {"partial": partial.astype(np.float32)}

"""Inputs and NumPy reference for the atomic-contention micro-benchmark."""

import numpy as np

CHUNK = 1 << 24


def inputs(kernel, params, rng):
    n = params["n"]
    keys = np.empty(n, np.uint32)
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        keys[start:stop] = rng.integers(0, 1 << 32, stop - start, dtype=np.uint64)
    return {"keys": keys, "bins": np.zeros(params["nbins"], np.int32)}


def reference(kernel, args, params):
    nbins = int(args["nbins"])
    counts = args["bins"].astype(np.int64)
    for start in range(0, args["keys"].size, CHUNK):
        part = args["keys"][start:start + CHUNK] & np.uint32(nbins - 1)
        counts += np.bincount(part, minlength=nbins)
    return {"bins": counts.astype(np.int32)}

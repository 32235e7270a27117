"""Inputs and NumPy reference for the atomic-contention micro-benchmark.

The keys are the generator's 32-bit words in order: what ``rng.integers(0, 2**32,
count, dtype=np.uint64)`` drew for them, a step of CHUNK keys at a time, when the
datasets were measured. They are made a piece at a time, where an emulation reads them
(``kerncast.core.stream_words``).
"""

import numpy as np

from kerncast.core import Chunked, advanced, stream_words

CHUNK = 1 << 24
PIECE = 1 << 16  # keys made at once where an emulation reaches them


def inputs(kernel, params, rng):
    n = params["n"]
    start = advanced(rng, 0)
    keys = Chunked(np.uint32, n, PIECE,
                   lambda k: stream_words(start, k * PIECE, min(PIECE, n - k * PIECE)))
    return {"keys": keys, "bins": np.zeros(params["nbins"], np.int32)}


def reference(kernel, args, params):
    nbins = int(args["nbins"])
    counts = args["bins"].astype(np.int64)
    for start in range(0, args["keys"].size, CHUNK):
        part = args["keys"][start:start + CHUNK] & np.uint32(nbins - 1)
        counts += np.bincount(part, minlength=nbins)
    return {"bins": counts.astype(np.int32)}

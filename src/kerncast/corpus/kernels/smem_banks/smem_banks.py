"""Inputs and NumPy reference for the shared-memory bank-conflict micro-benchmark.

Thread i sums table[(i * stride + k) mod W] for k < iters (modulo 2^32): a window of
a cyclic table, computed from prefix sums of the doubled table in closed form.
"""

import numpy as np

WORDS = 2048


def inputs(kernel, params, rng):
    return {"table": rng.integers(0, 1 << 32, WORDS, dtype=np.uint64).astype(np.uint32)}


def reference(kernel, args, params):
    table = args["table"].astype(np.int64)
    n, iters, stride = int(args["n"]), int(args["iters"]), int(args["stride"])
    prefix = np.concatenate(([0], np.cumsum(np.concatenate((table, table)))))
    start = (np.arange(n, dtype=np.int64) * stride) % WORDS
    rounds, rest = divmod(iters, WORDS)
    total = rounds * int(table.sum()) + prefix[start + rest] - prefix[start]
    return {"y": (total % (1 << 32)).astype(np.uint32)}

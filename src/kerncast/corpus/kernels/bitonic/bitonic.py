"""Inputs and NumPy references for the bitonic sorts.

For one global step (size, stride) the generator builds the state a bitonic sort is in
just before it: runs of size / 2 sorted uniform keys, ascending and descending in turn
(what the previous stage leaves), then the steps (size, size / 2), ..., (size, 2 stride)
of the current stage applied with NumPy.
"""

import numpy as np

from kerncast.core import Chunked, advanced, stream_words

CHUNK = 1 << 24
PIECE = 1 << 14  # keys made at once where an emulation reaches them (whole blocks of 2 size)


def _exchange(low, high, ascending):
    """Order every pair (low[i], high[i]) in place."""
    first = np.minimum(low, high) if ascending else np.maximum(low, high)
    (np.maximum if ascending else np.minimum)(low, high, out=high)
    low[...] = first


def _step(keys, size, stride):
    """Apply the compare-exchange step (size, stride) to ``keys`` in place.

    Viewed as (n / 2size, direction, size / 2stride, 2, stride), direction 0 holds the
    ascending blocks of ``size`` keys and direction 1 the descending ones; each pair joins
    the two halves of the fourth axis. A last lone block of ``size`` keys is ascending.
    """
    full = keys.size // (2 * size) * (2 * size)
    if (keys.size - full) % size:
        raise ValueError(f"a bitonic step needs n to be a multiple of size = {size}")
    view = keys[:full].reshape(-1, 2, size // (2 * stride), 2, stride)
    rows = max(1, CHUNK // (2 * size))
    for first in range(0, view.shape[0], rows):
        part = view[first:first + rows]
        _exchange(part[:, 0, :, 0], part[:, 0, :, 1], ascending=True)
        _exchange(part[:, 1, :, 0], part[:, 1, :, 1], ascending=False)
    if full < keys.size:
        last = keys[full:].reshape(-1, 2, stride)
        _exchange(last[:, 0], last[:, 1], ascending=True)


def _stage_keys(start, size, stride, lo, hi):
    """Keys ``lo`` up to ``hi`` (whole blocks of ``2 * size``, or the last lone block of
    ``size``): uniform keys (key ``i`` the ``i``-th 32-bit word drawn) in runs of ``size /
    2`` sorted, odd runs descending, then the stage's steps down to ``2 stride`` applied
    (a step never moves a key out of its block)."""
    run = size // 2
    keys = stream_words(start, lo, hi - lo).copy()
    runs = keys.reshape(-1, run)
    runs.sort(axis=1)
    odd = (lo // run + np.arange(len(runs))) % 2 == 1
    runs[odd] = runs[odd, ::-1]
    s = size // 2
    while s > stride:
        _step(keys, size, s)
        s //= 2
    return keys


def inputs(kernel, params, rng):
    n = params["n"]
    if kernel == "bitonic_block":
        return {"keys": rng.integers(0, 0xFFFFFFFF, n, dtype=np.uint32)}
    size, stride = params["size"], params["stride"]
    if n % size:
        raise ValueError(f"a bitonic step needs n to be a multiple of size = {size}")
    start, per = advanced(rng, 0), max(2 * size, PIECE)
    return {"keys": Chunked(np.uint32, n, per, lambda k: _stage_keys(
        start, size, stride, k * per, min(n, (k + 1) * per)))}


def reference(kernel, args, params):
    if kernel == "bitonic_block":
        keys, seg = args["keys"], int(args["seg"])
        out = np.empty_like(keys)
        full = keys.size // seg * seg
        step = max(seg, CHUNK // seg * seg)
        for start in range(0, full, step):
            stop = min(full, start + step)
            out[start:stop] = np.sort(keys[start:stop].reshape(-1, seg), axis=1).reshape(-1)
        out[full:] = np.sort(keys[full:])
        return {"out": out}
    keys = args["keys"].copy()
    _step(keys, int(args["size"]), int(args["stride"]))
    return {"keys": keys}

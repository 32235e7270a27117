"""A seeded permutation of a large array, made faster than NumPy makes it, with its values.

``numpy.random.Generator.permutation`` of a 1-d array shuffles a copy by Fisher-Yates:
for ``i`` from ``n - 1`` down to 1 it draws ``j`` in ``[0, i]`` (32-bit words of the bit
generator, masked to the smallest all-ones mask that covers ``i``, drawn again while
above ``i``) and swaps ``x[i]`` and ``x[j]``. Each step waits on the draw before it and
on a load from a random place of the array: over the 42M edges of a graph input that
took 2.1 s. :func:`permuted` draws a block of the ``j`` first (words taken from the bit
generator in bulk, :func:`_draws`) and then makes the block's swaps (:func:`_swaps`),
whose random loads no longer wait on one another: 0.6 s. The values and the state the
generator is left in are those of ``rng.permutation(array)``; :func:`shuffle` is
``rng.shuffle``, in place.

Both loops are compiled by Numba (cached on disk). Below :data:`COMPILED_FROM` values,
where Numba's JIT is off, where a mask needs more than 32 bits or where the bit
generator is not PCG64 (what ``numpy.random.default_rng`` makes), NumPy does the work
itself.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from kerncast.core._jit import jitted

__all__ = ["COMPILED_FROM", "permuted", "shuffle"]

#: arrays shorter than this are left to ``rng.permutation`` (compiling costs more)
COMPILED_FROM = 1 << 20
#: the draws made (and words taken from the bit generator) per block
_BLOCK = 1 << 22


def permuted(rng: np.random.Generator, array: np.ndarray) -> np.ndarray:
    """``rng.permutation(array)`` of a 1-d ``array``, the same values, ``rng`` left in the
    same state; a new array."""
    array = np.asarray(array)
    if array.ndim != 1:
        return rng.permutation(array)
    out = np.array(array, copy=True)
    shuffle(rng, out)
    return out


def shuffle(rng: np.random.Generator, out: np.ndarray) -> None:
    """``rng.shuffle(out)`` of a 1-d array, in place: the same order, ``rng`` left in the
    same state."""
    if out.ndim == 1 and out.size < 2:  # no step, no draw
        return
    fits = out.ndim == 1 and COMPILED_FROM <= out.size <= 1 << 32
    draws, swaps = (jitted(_draws), jitted(_swaps)) if fits else (None, None)
    if draws is None or swaps is None or not isinstance(rng.bit_generator, np.random.PCG64):
        rng.shuffle(out)
        return
    state: Any = rng.bit_generator.state
    i = out.size - 1
    js = np.empty(_BLOCK, np.uint32)
    if state["has_uint32"]:  # the buffered half of a 64-bit output comes first
        _, made = draws(np.array([state["uinteger"]], np.uint32), i, js)
        swaps(out, i, js, made)
        i -= made
    source = _bits_at(dict(state, has_uint32=0))
    taken = 0  # 32-bit words of the bit generator's stream (two per output, low half first)
    blocks = [js, np.empty(_BLOCK, np.uint32)]
    # a block's swaps (on the worker) run while the next block's draws are made here: the
    # worker makes them in order, and a block's buffer is filled again only after the
    # swaps two blocks back, which the worker had finished before it took the last ones
    with ThreadPoolExecutor(1, thread_name_prefix="kerncast-shuffle") as worker:
        pending: Future | None = None
        while i >= 1:
            block = blocks[0]
            blocks.reverse()  # the next block fills the other buffer
            words = source.random_raw(_BLOCK // 2).view(np.uint32)
            used, made = draws(words, i, block)
            if pending is not None:
                pending.result()
            pending = worker.submit(swaps, out, i, block, made)
            i -= made
            taken += used
        if pending is not None:
            pending.result()
    rng.bit_generator.state = _after(state, taken)


def _bits_at(state: Any) -> np.random.PCG64:
    """A PCG64 bit generator in ``state``."""
    bits = np.random.PCG64()
    bits.state = state
    return bits


def _after(state: Any, taken: int) -> Any:
    """The bit generator's state after ``taken`` words of its stream from ``state``: an odd
    count leaves the high half of the last output buffered, and an even one leaves it
    behind as NumPy does (``has_uint32`` 0, ``uinteger`` the half last handed out)."""
    if taken == 0:  # the buffered half was the one draw
        return {**state, "has_uint32": 0}
    outputs = (taken + 1) // 2
    bits = _bits_at(dict(state, has_uint32=0))
    bits.advance(outputs - 1)
    high = int(bits.random_raw(1)[0]) >> 32
    return {**bits.state, "has_uint32": taken % 2, "uinteger": high}


def _draws(words: np.ndarray, i: int, js: np.ndarray) -> tuple[int, int]:
    """The ``j`` of Fisher-Yates steps ``i``, ``i - 1``, ... into ``js``, each drawn from
    ``words`` by masked rejection, until ``js`` is full, the words run out or ``i`` reaches
    0; (words used, draws made)."""
    at, made = 0, 0
    while i >= 1 and made < js.size:
        mask = i | i >> 1
        mask |= mask >> 2
        mask |= mask >> 4
        mask |= mask >> 8
        mask |= mask >> 16
        while True:
            if at >= words.size:
                return at, made
            value = words[at] & mask
            at += 1
            if value <= i:
                break
        js[made] = value
        made += 1
        i -= 1
    return at, made


def _swaps(data: np.ndarray, i: int, js: np.ndarray, made: int) -> None:
    """Swap ``data[i - k]`` and ``data[js[k]]`` for the first ``made`` draws, in order."""
    for k in range(made):
        j = js[k]
        value = data[j]
        data[j] = data[i - k]
        data[i - k] = value

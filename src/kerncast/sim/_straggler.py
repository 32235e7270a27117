"""Stragglers: one thread whose loop runs over a range it reads from its inputs.

A thread that walks a CSR row or a vertex's edge list runs its loop from ``B[i]`` to
``B[i + 1]`` of an offsets buffer ``B``. Where the lengths follow a power law, one
thread of the grid may walk thousands of entries while the blocks emulated for the
round walk tens, and that thread alone sets the kernel's time (bfs_frontier_expand at
size large on the H100: 3.7 ms, for any launch configuration, from a vertex of degree
16,384). The emulated blocks rarely hold it.

The traced lanes show the pattern: a lane loads two neighbouring words of one buffer
once (``B[i]`` and ``B[i + 1]``), then runs a load inside a loop as many times as
their difference says (divided by a stride when lanes share a row). Where every
traced lane fits, the longest range in the whole buffer is the longest trip any
thread of the grid can make; the thread's time is that many iterations at the pace
its warp kept in the simulated round.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kerncast.trace import KINDS, SPACES

__all__ = ["LoopBound", "loop_trip_bound"]

MIN_LANES = 16     # traced lanes that must run the loop for the pattern to be trusted
FIT_SHARE = 0.9    # share of those lanes whose trip count the offsets must explain
MIN_GAIN = 4.0     # the grid's longest trip must exceed the traced lanes' by this factor


@dataclass(frozen=True)
class LoopBound:
    """The longest data-dependent loop of the grid."""

    pc: int            # a load inside the loop (one access per iteration and lane)
    buffer: str        # the offsets buffer the trip counts come from
    stride: int        # entries a lane steps over per iteration
    trips: int         # the most iterations any thread of the grid runs
    traced_trips: int  # the most any traced lane ran
    warp: int          # the traced warp whose lane ran the most iterations
    lanes: int         # traced lanes that fit the pattern


def loop_trip_bound(trace, regions) -> LoopBound | None:
    """The loop of ``trace`` whose trip counts the offsets in one of ``regions`` (the
    launch's global buffers) explain, with its longest trip over the whole buffer, or
    None when no loop fits or the traced lanes already hold the longest trips."""
    acc = trace.memory
    load = ((acc.kind == KINDS.index("load")) & (acc.space == SPACES.index("global"))
            & (acc.width == 4))
    if not load.any():
        return None
    pc, lane = acc.pc[load], acc.warp[load] * 32 + acc.lane[load].astype(np.int64)
    address = acc.address[load].astype(np.int64)
    keys, first, counts = np.unique(np.stack([pc, lane]), axis=1, return_index=True,
                                    return_counts=True)
    once = _once_pcs(keys, counts)
    looped = np.unique(keys[0][counts > 1])
    best = None
    for a, b in _neighbour_pairs(keys, first, address, once):
        found = _fit(keys, counts, first, address, a, b, looped, regions)
        if found is not None and (best is None or found.trips > best.trips):
            best = found
    return best


def _once_pcs(keys: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Load pcs that every lane running them runs once."""
    pcs = np.unique(keys[0])
    repeated = np.unique(keys[0][counts > 1])
    return np.setdiff1d(pcs, repeated)


def _neighbour_pairs(keys, first, address, once):
    """Pairs (pc a, pc b) of once-run loads where every lane loads the word after a's at b."""
    per_pc = {int(p): (keys[1][keys[0] == p], address[first[keys[0] == p]]) for p in once}
    for a, (lanes_a, addr_a) in per_pc.items():
        for b, (lanes_b, addr_b) in per_pc.items():
            if a == b:
                continue
            common, ia, ib = np.intersect1d(lanes_a, lanes_b, return_indices=True)
            if len(common) >= MIN_LANES and np.all(addr_b[ib] - addr_a[ia] == 4):
                yield a, b


def _fit(keys, counts, first, address, a, b, looped, regions) -> LoopBound | None:
    at_a = keys[0] == a
    lanes = keys[1][at_a]
    start = address[first[at_a]]
    region = _region_of(int(start[0]), regions)
    offsets = None if region is None else region.array()
    if offsets is None or offsets.dtype.itemsize != 4 or offsets.dtype.kind not in "iu":
        return None
    words = offsets.reshape(-1).astype(np.int64)
    index = (start - region.base) // 4
    if index.max() + 1 >= len(words) or np.any((start - region.base) % 4):
        return None
    span = words[index + 1] - words[index]
    best = None
    for pc in looped:
        at = keys[0] == pc
        trips = np.zeros(len(lanes), np.int64)
        where = np.searchsorted(lanes, keys[1][at])
        inside = where < len(lanes)
        inside[inside] &= lanes[where[inside]] == keys[1][at][inside]
        trips[where[inside]] = counts[at][inside]
        ran = trips > 0
        if ran.sum() < MIN_LANES:
            continue
        stride = max(1, int(round(np.median(span[ran] / trips[ran]))))
        expect = np.ceil(np.maximum(span, 0) / stride)
        fits = np.abs(trips[ran] - expect[ran]) <= 1
        if fits.mean() < FIT_SHARE:
            continue
        longest = int(math.ceil(max(int(np.diff(words).max()), 0) / stride))
        traced = int(trips.max())
        if longest < MIN_GAIN * traced:
            continue
        lane = int(lanes[int(np.argmax(trips))])
        found = LoopBound(pc=int(pc), buffer=region.name, stride=stride, trips=longest,
                          traced_trips=traced, warp=lane // 32, lanes=int(ran.sum()))
        if best is None or found.trips > best.trips:
            best = found
    return best


def _region_of(address: int, regions):
    for region in regions:
        if region.base <= address < region.base + region.nbytes:
            return region
    return None

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

The same ranges tell when an emulated block is the rare one: a warp whose longest
trip so few ranges of the buffer reach that fewer than one block in ten holds one
(bfs_queue_expand at size large on the H100, 512 threads a block: an emulated block
walks a hub of 4,096 edges). Repeated in every round, it would charge its walk to
every wave; the round takes another emulated block's stream instead, and the
straggler bound charges the walk once.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, replace

import numpy as np

from kerncast.trace import KINDS, SPACES

__all__ = ["LoopBound", "loop_trip_bound"]

MIN_LANES = 16     # traced lanes that must run the loop for the pattern to be trusted
FIT_SHARE = 0.9    # share of those lanes whose trip count the offsets must explain
RARE = 0.1         # a warp is rare when fewer blocks than this share hold a trip as long
#: offsets buffers whose ranges are kept (a sweep predicts one problem's launches in turn)
KEPT_RANGES = 4


@dataclass(frozen=True)
class LoopBound:
    """The longest data-dependent loop of the grid."""

    pc: int            # a load inside the loop (one access per iteration and lane)
    buffer: str        # the offsets buffer the trip counts come from
    stride: int        # entries a lane steps over per iteration
    trips: int         # the most iterations any thread of the grid runs
    traced_trips: int  # the most any traced lane ran
    lanes: int         # traced lanes that fit the pattern
    rare: frozenset = frozenset()  # traced warps whose longest trip few blocks reach


def loop_trip_bound(trace, regions, threads_per_block: int,
                    repeatable: bool = False) -> LoopBound | None:
    """The loop of ``trace`` whose trip counts the offsets in one of ``regions`` (the
    launch's global buffers) explain, with its longest trip over the whole buffer and
    the traced warps that are rare among blocks of ``threads_per_block``, or None
    when no loop fits. With ``repeatable`` (the buffers hold the same values on every
    call while they live: generated inputs, not a caller's arrays) the ranges of an
    offsets buffer the kernel did not write are kept for the next call."""
    acc = trace.memory
    load = ((acc.kind == KINDS.index("load")) & (acc.space == SPACES.index("global"))
            & (acc.width == 4))
    if not load.any():
        return None
    pc, lane = acc.pc[load], acc.warp[load] * 32 + acc.lane[load].astype(np.int64)
    address = acc.address[load].astype(np.int64)
    # (pc, lane) pairs as one integer each: a unique over pairs of columns sorts records
    lanes = int(lane.max()) + 1
    pairs, first, counts = np.unique(pc.astype(np.int64) * lanes + lane, return_index=True,
                                     return_counts=True)
    keys = np.stack([pairs // lanes, pairs % lanes])
    looped = np.unique(keys[0][counts > 1])        # some lane runs them more than once
    once = np.setdiff1d(np.unique(keys[0]), looped)  # every lane runs them once
    ranges: dict[str, tuple] = {}  # per buffer, its words and ranges (Spans), made once
    found = [bound for a, b in _neighbour_pairs(keys, first, address, once)
             for bound in _fits(keys, counts, first, address, (a, b), looped, regions,
                                threads_per_block, ranges, repeatable)]
    if not found:
        return None
    # a loop unrolled around another (several threads' rows a thread) fits once per copy:
    # the longest sets the bound, a warp rare in any of them is rare
    best = max(found, key=lambda bound: bound.trips)
    return replace(best, rare=frozenset().union(*(bound.rare for bound in found)))


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


def _fits(keys, counts, first, address, pair, looped, regions, threads_per_block: int,
          ranges: dict[str, tuple], repeatable: bool) -> list[LoopBound]:
    """The loops whose trip counts the neighbouring loads ``pair`` explain."""
    at_a = keys[0] == pair[0]
    lanes = keys[1][at_a]
    start = address[first[at_a]]
    region = _region_of(int(start[0]), regions)
    if region is None:
        return []
    # the inputs' own array where the kernel did not write it (no copy of the buffer)
    offsets = region.unwritten()
    offsets = region.array() if offsets is None else offsets
    if offsets.dtype.itemsize != 4 or offsets.dtype.kind not in "iu":
        return []
    if region.name not in ranges:
        ranges[region.name] = (offsets.reshape(-1),
                               _ranges_of(offsets, threads_per_block, repeatable))
    words, spans = ranges[region.name]
    index = (start - region.base) // 4
    if index.max() + 1 >= len(words) or np.any((start - region.base) % 4):
        return []
    span = words[index + 1].astype(np.int64) - words[index]
    out = []
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
        longest = int(math.ceil(max(spans.longest, 0) / stride))
        out.append(LoopBound(
            pc=int(pc), buffer=region.name, stride=stride, trips=longest,
            traced_trips=int(trips.max()), lanes=int(ran.sum()),
            rare=_rare_warps(lanes // 32, trips, spans, stride, threads_per_block)))
    return out


def _rare_warps(warps: np.ndarray, trips: np.ndarray, spans: Spans, stride: int,
                threads_per_block: int) -> frozenset:
    """Warps whose longest trip fewer than :data:`RARE` of the blocks reach: the share
    of the buffer's ranges at least as long, times the threads of a block."""
    order = np.argsort(trips)[::-1]
    rare = set()
    for i in order:
        if trips[i] <= 1:
            break
        reach = spans.longer_than((trips[i] - 1) * stride)
        if reach / spans.count * threads_per_block >= RARE:
            break
        rare.add(int(warps[i]))
    return frozenset(rare)


@dataclass(frozen=True)
class Spans:
    """The ranges of an offsets buffer (``B[i + 1] - B[i]``), as far as the bound needs
    them: how many, the longest, and the longest ``top`` in ascending order. Counting the
    ranges longer than a trip needs no more: a count that reaches ``len(top)`` already
    makes the warp common."""

    count: int
    longest: int
    top: np.ndarray

    def longer_than(self, length: float) -> int:
        """The ranges longer than ``length``, exactly where fewer than ``len(top)``,
        else ``len(top)`` (a lower bound)."""
        return len(self.top) - int(np.searchsorted(self.top, length, side="right"))


def _top_needed(count: int, threads_per_block: int) -> int:
    """Ranges to keep so that every count that can leave a warp rare is exact: one more
    than the most a rare warp's reach can be."""
    return min(count, int(math.ceil(RARE * count / max(threads_per_block, 1))) + 1)


_KEPT: list[tuple[tuple, weakref.ref, Spans]] = []


def _ranges_of(offsets: np.ndarray, threads_per_block: int, repeatable: bool) -> Spans:
    """The :class:`Spans` of ``offsets``, without sorting a buffer of millions of ranges
    (a partition of the longest); where ``repeatable`` and the emulation did not write
    the buffer (a read-only view of the inputs), kept while the inputs live: each launch
    of a sweep over one problem reads the same offsets."""
    root = offsets
    while isinstance(root.base, np.ndarray):
        root = root.base
    key = (id(root), offsets.__array_interface__["data"][0], offsets.size, offsets.dtype.str)
    # enough for blocks of a warp and more: a sweep's other block sizes find them kept
    need = _top_needed(max(offsets.size - 1, 0), min(threads_per_block, 32))
    keep = repeatable and not offsets.flags.writeable
    for kept_key, ref, spans in _KEPT if keep else []:
        if kept_key == key and ref() is root and len(spans.top) >= need:
            return spans
    spans = _spans(offsets.reshape(-1), need)
    if keep:
        _KEPT[:] = [(key, weakref.ref(root), spans)] + [
            kept for kept in _KEPT if kept[0] != key and kept[1]() is not None
        ][:KEPT_RANGES - 1]
    return spans


def _spans(words: np.ndarray, top: int) -> Spans:
    # one new array of the buffer's size (freshly touched memory is dear), partitioned in place
    diff = np.subtract(words[1:], words[:-1], dtype=np.int64)
    if not len(diff):
        return Spans(0, 0, diff)
    longest = int(diff.max())
    if top < len(diff):
        diff.partition(len(diff) - top)
        diff = diff[len(diff) - top:]
    return Spans(len(words) - 1, longest, np.sort(diff))


def _region_of(address: int, regions):
    for region in regions:
        if region.base <= address < region.base + region.nbytes:
            return region
    return None

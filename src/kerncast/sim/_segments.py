"""Grids whose working blocks come first and whose idle blocks follow them.

The block scheduler hands blocks to the SMs in the order of their linear index (x
fastest). A grid launched past its data puts the blocks that work first and those that
fail their bounds checks after them, so the GPU runs the working blocks wave after wave
and then the idle ones: the launch takes about the time of the two parts run one after
the other. ``tools/overlaunch_probe.py`` on the H200 (``data/probes/overlaunch-h200.json``):
a tiled transpose launched on 256 x 1,024 blocks, where 256 x 256 cover its matrix,
takes 303.1 µs; the covering grid 150.3 µs and the whole grid with every block idle
205.9 µs, of which three quarters is 154.4: 304.7 µs for the two parts.

A round that mixes working and idle blocks in the grid's proportions (what the predictor
does where the blocks' work differs in no order it can see) has each working block run
beside idle ones, with the memory system a quarter as loaded: it predicted that launch
at 503 µs. Where the blocks checked at :data:`SPLIT_POINTS` places work up to one of
them and are short from the next one on, :func:`grid_split` finds the first short block
by bisection, and the two runs are predicted apart and added (:func:`joined`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

import numpy as np

__all__ = ["SPLIT_POINTS", "grid_split", "joined", "segment_anchor"]

#: places of the grid (block 0 among them) whose blocks are checked for a split
SPLIT_POINTS = 16



class _Predicted(Protocol):
    seconds: float
    breakdown: dict[str, float]
    bottleneck: str
    based_on: dict[str, Any]


R = TypeVar("R", bound=_Predicted)


def grid_split(long: Callable[[list[int]], set[int] | None], blocks: int) -> int | None:
    """The first block of the grid's idle run: where the blocks at :data:`SPLIT_POINTS`
    evenly spaced places (the grid's last block left out: a grid rounded up to whole
    blocks has that one short anyway) are long up to one place and short from the next,
    the block between them where the short ones start, found by bisection; else None.

    ``long(chosen)`` names those of ``chosen`` that run longer than the short blocks
    may, or is None where their emulation failed (then there is no split to trust).
    Block 0 is long: the short blocks are those far shorter than it."""
    points = sorted({int(p) for p in np.linspace(0, blocks - 2, SPLIT_POINTS).round()} - {0})
    if not points:
        return None
    found = long(points)
    if found is None:
        return None
    marks = [True] + [p in found for p in points]
    places = [0, *points]
    first_short = marks.index(False) if False in marks else None
    if first_short is None or any(marks[first_short:]):
        return None  # every place works, or short and working places interleave
    lo, hi = places[first_short - 1], places[first_short]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        found = long([mid])
        if found is None:
            return None
        lo, hi = (mid, hi) if mid in found else (lo, mid)
    return hi


def segment_anchor(first: int, count: int, grid: Sequence[int]) -> int:
    """The block of the run ``[first, first + count)`` that stands for it: the first one
    whose next block along x (and whose block one row on, one plane on, for grids with
    rows, planes) does not wrap to another row (plane), where the run holds one."""
    gx, gy, _ = (list(grid) + [1, 1, 1])[:3]
    end = first + count
    anchor = first
    if gx > 1 and anchor % gx == gx - 1 and anchor + 1 < end:
        anchor += 1
    if gy > 1 and (anchor // gx) % gy == gy - 1:
        plane = (anchor // (gx * gy) + 1) * gx * gy
        anchor = plane if plane < end else anchor
    return anchor


def joined(parts: Sequence[R], spans: Sequence[tuple[int, int]], fixed: float) -> R:
    """One prediction of a launch from those of its runs of blocks (``spans``: first
    block, count), one after the other: their times added with the launch's fixed cost
    (``fixed`` seconds) counted once, their parts added likewise, the bottleneck the
    largest part; what it rests on is the first run's, with each run's share, and the
    work (operations, DRAM bytes) of all of them."""
    first = parts[0]
    seconds = sum(p.seconds for p in parts) - fixed * (len(parts) - 1)
    breakdown: dict[str, float] = {}
    for p in parts:
        for key, value in p.breakdown.items():
            breakdown[key] = breakdown.get(key, 0.0) + value
    breakdown["launch"] = breakdown.get("launch", 0.0) - fixed * (len(parts) - 1)
    bottleneck = max(breakdown, key=breakdown.__getitem__)
    based_on = dict(first.based_on)
    based_on["blocks"] = sum(count for _, count in spans)
    works = [p.based_on["work"] for p in parts if isinstance(p.based_on.get("work"), dict)]
    if works:
        based_on["work"] = {key: sum(w.get(key, 0.0) for w in works) for key in works[0]}
    based_on["segments"] = [
        {"first_block": start, "blocks": count, "seconds": p.seconds,
         "bottleneck": p.bottleneck, "round_cycles": p.based_on.get("round_cycles"),
         "waves": p.based_on.get("waves")}
        for p, (start, count) in zip(parts, spans)]
    return replace(first, seconds=seconds, breakdown=breakdown, bottleneck=bottleneck,
                   based_on=based_on)

"""How to divide a grid's slices among devices: a line through each device's samples,
and the shares that end every device's part at the same time.

Each device's time for ``s`` slices of the grid is modelled as ``a + b s`` (the sampling
seed's linear model: a fixed launch cost and a cost per slice), fitted by least squares
to the samples it ran. Giving device ``i`` ``n_i`` of ``R`` slices ends all parts at once
when ``a_i + b_i n_i = T`` for every device, so ``T = (R + sum a_i / b_i) / sum 1 / b_i``;
a device whose share comes out negative (its fixed cost alone is longer than ``T``) is
left out and the rest solved again. Shares are rounded to whole slices by largest
remainder.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Line", "balanced_shares", "fit_line", "proportional_shares"]


@dataclass(frozen=True)
class Line:
    """``seconds = fixed_s + per_slice_s * slices`` for one device."""

    fixed_s: float
    per_slice_s: float

    def seconds(self, slices: int) -> float:
        return 0.0 if slices <= 0 else self.fixed_s + self.per_slice_s * slices


def fit_line(samples: Sequence[tuple[int, float]]) -> Line:
    """The line through ``(slices, seconds)`` samples (least squares; a single sample, or
    samples that would give a negative cost per slice, go through the origin)."""
    x = np.array([s for s, _ in samples], float)
    y = np.array([t for _, t in samples], float)
    if len(x) >= 2 and np.ptp(x) > 0:
        slope, intercept = np.polyfit(x, y, 1)
        if slope > 0:
            return Line(max(float(intercept), 0.0), float(slope))
    return Line(0.0, float(np.sum(y) / max(np.sum(x), 1e-300)))


def balanced_shares(lines: Sequence[Line], total: int) -> list[int]:
    """Whole slices for each device so that their parts end together (see the module)."""
    if total <= 0:
        return [0] * len(lines)
    active = list(range(len(lines)))
    while True:
        rate = sum(1.0 / lines[i].per_slice_s for i in active)
        finish = (total + sum(lines[i].fixed_s / lines[i].per_slice_s for i in active)) / rate
        raw = {i: (finish - lines[i].fixed_s) / lines[i].per_slice_s for i in active}
        negative = [i for i in active if raw[i] < 0]
        if not negative:
            break
        active = [i for i in active if i not in negative]
    weights = [raw.get(i, 0.0) for i in range(len(lines))]
    return _rounded(weights, total)


def proportional_shares(weights: Sequence[float], total: int) -> list[int]:
    """Whole slices in proportion to ``weights`` (an equal split, a split by peak rates)."""
    return _rounded(list(weights), total)


def _rounded(weights: list[float], total: int) -> list[int]:
    scale = sum(max(w, 0.0) for w in weights)
    exact = [max(w, 0.0) / scale * total if scale > 0 else total / len(weights)
             for w in weights]
    shares = [math.floor(e) for e in exact]
    order = sorted(range(len(exact)), key=lambda i: exact[i] - shares[i], reverse=True)
    for i in order[:total - sum(shares)]:
        shares[i] += 1
    return shares

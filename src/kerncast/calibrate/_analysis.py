"""Reading cache geometry off latency curves, and small fits."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["cache_size_from_curve", "fit_line", "granularity_from_curve"]


def cache_size_from_curve(curve: Sequence[Sequence[float]]) -> float:
    """The largest footprint whose latency stays within a quarter of the way up the curve.

    ``curve`` holds ``[footprint_bytes, cycles_per_access]`` pairs in increasing
    footprint. A pointer chase that fits in a cache runs at the hit latency; past
    the cache's size it climbs to the next level's latency. Returns ``nan`` for a
    flat curve (no step within the footprints measured).
    """
    data = np.asarray(curve, dtype=float)
    if len(data) < 2:
        return float("nan")
    lat = data[:, 1]
    low, high = lat.min(), lat.max()
    if high < 1.3 * low:
        return float("nan")
    below = data[lat <= low + 0.25 * (high - low), 0]
    return float(below.max())


def granularity_from_curve(curve: Sequence[Sequence[float]]) -> float:
    """The fetch granularity from latency versus stride past a cache's capacity.

    With strides below the granularity, several consecutive accesses share one
    fetched unit, so the mean latency falls below the miss latency. The first stride
    whose latency reaches 90% of the largest is the granularity.
    """
    data = np.asarray(curve, dtype=float)
    lat = data[:, 1]
    reached = data[lat >= 0.9 * lat.max(), 0]
    return float(reached.min())


def fit_line(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least-squares intercept and slope."""
    slope, intercept = np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)
    return float(intercept), float(slope)

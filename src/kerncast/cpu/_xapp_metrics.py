"""XAPP's error metrics (section 5 of the seed): the mean relative error and the
"average weighted error" that weights each error by the speedup class of the actual value.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kerncast._errors import InputError

__all__ = [
    "PAPER_BOUNDS",
    "PAPER_WEIGHTS",
    "data_bounds",
    "mean_relative_error",
    "relative_errors",
    "weighted_error",
]

PAPER_BOUNDS: tuple[float, float] = (30.0, 100.0)
"""The seed's speedup classes: irregular below 30x, embarrassingly parallel above 100x."""
PAPER_WEIGHTS: tuple[float, float, float] = (1.0, 0.75, 0.5)
"""The weights of the three classes (section 5.2, footnote 4: "indeed arbitrary")."""


def _pair(actual: Sequence[float] | np.ndarray,
          predicted: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(actual, dtype=float).ravel()
    p = np.asarray(predicted, dtype=float).ravel()
    if a.shape != p.shape:
        raise InputError(f"actual and predicted differ in length ({a.size} vs {p.size}); give one "
                         "prediction per actual speedup")
    if a.size == 0:
        raise InputError("no values to score; give at least one actual and predicted speedup")
    if not (np.all(np.isfinite(a)) and np.all(a > 0)):
        raise InputError("actual speedups must be finite and positive; drop the rows without a "
                         "measured speedup")
    if not np.all(np.isfinite(p)):
        raise InputError("predicted speedups must be finite; check the model's output")
    return a, p


def relative_errors(actual: Sequence[float] | np.ndarray,
                    predicted: Sequence[float] | np.ndarray) -> np.ndarray:
    """Signed relative errors ``(predicted - actual) / actual`` (Table 4's "Err." / 100)."""
    a, p = _pair(actual, predicted)
    return (p - a) / a


def mean_relative_error(actual: Sequence[float] | np.ndarray,
                        predicted: Sequence[float] | np.ndarray) -> float:
    """The seed's "average error": the arithmetic mean of ``|predicted - actual| / actual``,
    as a fraction (0.41 is 41%)."""
    return float(np.mean(np.abs(relative_errors(actual, predicted))))


def _check_bounds(bounds: Sequence[float], weights: Sequence[float]) -> tuple[float, float]:
    if len(bounds) != 2 or len(weights) != 3:
        raise InputError(f"weighted_error takes two class bounds and three weights, got "
                         f"{len(bounds)} and {len(weights)}; e.g. bounds=(30, 100), "
                         "weights=(1, 0.75, 0.5)")
    low, high = float(bounds[0]), float(bounds[1])
    if not (0 < low <= high):
        raise InputError(f"class bounds must satisfy 0 < low <= high, got {low}, {high}")
    return low, high


def weighted_error(actual: Sequence[float] | np.ndarray,
                   predicted: Sequence[float] | np.ndarray,
                   bounds: Sequence[float] = PAPER_BOUNDS,
                   weights: Sequence[float] = PAPER_WEIGHTS) -> float:
    """The seed's "average weighted error" (section 5.2, Table 4), as a fraction.

    Each ``|relative error|`` is weighted by the class of the *actual* speedup:
    ``weights[0]`` below ``bounds[0]``, ``weights[1]`` from ``bounds[0]`` to ``bounds[1]``
    and ``weights[2]`` above ``bounds[1]``; the sum is divided by the number of values,
    not by the sum of the weights, as the seed does (352/11 = 32%).
    """
    low, high = _check_bounds(bounds, weights)
    a, p = _pair(actual, predicted)
    w = np.where(a < low, weights[0], np.where(a <= high, weights[1], weights[2]))
    return float(np.sum(w * np.abs(p - a) / a) / a.size)


def data_bounds(speedups: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Class bounds suited to a data set: the terciles of its (training) speedups.

    The seed's 30x and 100x describe its 2013 GPUs and benchmarks; on another platform the
    same three-way split of "irregular", "middle" and "embarrassingly parallel" kernels is
    kept by cutting at the 1/3 and 2/3 quantiles. Give only training speedups.
    """
    s = np.asarray(speedups, dtype=float).ravel()
    s = s[np.isfinite(s) & (s > 0)]
    if s.size < 3:
        raise InputError(f"data_bounds needs at least 3 positive speedups, got {s.size}")
    low, high = np.quantile(s, [1 / 3, 2 / 3])
    return float(low), float(high)

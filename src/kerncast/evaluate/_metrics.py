"""Error metrics, with exact definitions (the report and the docs quote these).

For measured times ``m_i`` and predicted times ``p_i`` over the rows a model predicted:

* absolute percentage error ``APE_i = 100 * |p_i - m_i| / m_i``;
* ``mape_pct`` = mean APE; ``median_ape_pct`` = median APE; ``p90_ape_pct`` = 90th
  percentile of APE (linear interpolation, NumPy's default);
* ``within_10_pct`` / ``within_25_pct`` = percent of rows with APE <= 10 / <= 25 (up to
  a relative 1e-9 for rounding);
* Spearman's rank correlation between ``p`` and ``m`` across the launch configurations of
  one group (same kernel, language, size, device and SM count) with at least 3 predicted
  configurations; ties get average ranks; a model that predicts the same time for every
  configuration ranks nothing and scores 0; groups whose measured times are all equal are
  skipped. A kernel's value is the median over its groups; a model's is the median over
  kernels;
* top-1 regret of a group (at least 2 configurations): the measured time of the
  configuration the model predicts fastest over the fastest measured time, minus 1, in
  percent; where several configurations tie for the predicted minimum, their mean
  measured time is used (the expected regret of picking one at random); the fastest
  measured time is over every measured row of the group, predicted or not. A kernel's
  and a model's values are means over their groups.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import rankdata

__all__ = [
    "GROUP_COLUMNS",
    "MIN_RANK_CONFIGS",
    "MIN_REGRET_CONFIGS",
    "ape_pct",
    "error_summary",
    "spearman",
    "top1_regret_pct",
]

#: Columns that fix everything but the launch configuration (those present are used).
GROUP_COLUMNS = ("kernel", "language", "size", "device", "sm_count")
MIN_RANK_CONFIGS = 3
MIN_REGRET_CONFIGS = 2
_ROUNDING = 1 + 1e-9  # an APE of 10% computed as 10.000000000000009 is within 10%


def ape_pct(measured: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Absolute percentage error of each prediction, in percent."""
    measured = np.asarray(measured, dtype=float)
    predicted = np.asarray(predicted, dtype=float)
    return 100.0 * np.abs(predicted - measured) / measured


def error_summary(ape: np.ndarray) -> dict[str, float]:
    """MAPE, median and 90th-percentile APE and the shares within 10% and 25% (percent)."""
    ape = np.asarray(ape, dtype=float)
    if ape.size == 0:
        return {k: math.nan for k in ("mape_pct", "median_ape_pct", "p90_ape_pct",
                                      "within_10_pct", "within_25_pct")}
    return {
        "mape_pct": float(np.mean(ape)),
        "median_ape_pct": float(np.median(ape)),
        "p90_ape_pct": float(np.percentile(ape, 90)),
        "within_10_pct": float(100.0 * np.mean(ape <= 10.0 * _ROUNDING)),
        "within_25_pct": float(100.0 * np.mean(ape <= 25.0 * _ROUNDING)),
    }


def _ranks(values: np.ndarray) -> np.ndarray:
    return rankdata(values, method="average")


def spearman(measured: np.ndarray, predicted: np.ndarray) -> float:
    """Spearman's rho of one group (NaN where it does not apply; see the module docstring)."""
    measured = np.asarray(measured, dtype=float)
    predicted = np.asarray(predicted, dtype=float)
    if measured.size < MIN_RANK_CONFIGS or np.ptp(measured) == 0:
        return math.nan
    if np.ptp(predicted) == 0:
        return 0.0
    rm, rp = _ranks(measured), _ranks(predicted)
    return float(np.corrcoef(rm, rp)[0, 1])


def top1_regret_pct(measured: np.ndarray, predicted: np.ndarray,
                    best_measured: float | None = None) -> float:
    """Regret of choosing the predicted-fastest configuration, in percent.

    Parameters
    ----------
    measured, predicted
        Times of the configurations the model predicted.
    best_measured
        The fastest measured time of the whole group (default: ``min(measured)``).
    """
    measured = np.asarray(measured, dtype=float)
    predicted = np.asarray(predicted, dtype=float)
    if measured.size < MIN_REGRET_CONFIGS:
        return math.nan
    best = float(np.min(measured)) if best_measured is None else float(best_measured)
    tied = predicted <= predicted.min() * (1 + 1e-12)
    return float(100.0 * (np.mean(measured[tied]) / best - 1.0))

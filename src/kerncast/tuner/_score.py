"""Predicted times scored against times that Kernel Tuner measured.

For the pairs ``(p_i, m_i)`` where both the predicted and the measured time are finite
(pairs with a NaN, e.g. a configuration that failed to compile, are skipped):

* ``mape_pct``: mean of ``100 * |p_i - m_i| / m_i``;
* ``spearman``: Spearman's rank correlation of ``p`` and ``m``
  (:func:`scipy.stats.spearmanr`; ties get average ranks; NaN where either side is
  constant, since no ranking exists);
* ``regret_topK_pct`` for K = 1, 5, 10: take the K configurations predicted fastest
  (ties in predicted time broken by input order; all of them where fewer than K), the
  fastest measured time among them, ``b_K``, and report ``100 * (b_K / min(m) - 1)``:
  how much slower than the true best a tuner is that measures only the K configurations
  the prediction ranks first. 0 means the best configuration is among them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from kerncast._errors import InputError
from kerncast.tuner._cache import KTCache, cache_key

__all__ = ["TOP_K", "compare", "score"]

#: The ``k`` of the top-k regrets that :func:`score` reports.
TOP_K = (1, 5, 10)


def score(predicted_ms: Sequence[float] | np.ndarray | pd.Series,
          measured_ms: Sequence[float] | np.ndarray | pd.Series) -> dict[str, Any]:
    """MAPE, Spearman correlation and top-1/5/10 regret of predicted against measured times.

    Parameters
    ----------
    predicted_ms, measured_ms
        Times of the same configurations in the same order (milliseconds, or any one
        unit for both). NaN (or infinite) in either skips that pair.

    Returns
    -------
    dict
        ``n`` (pairs scored), ``skipped`` (pairs with a NaN), ``mape_pct``,
        ``spearman``, ``regret_top1_pct``, ``regret_top5_pct``, ``regret_top10_pct``
        (definitions in the module docstring).

    Raises
    ------
    InputError
        Inputs that are not 1-D numbers of equal length, fewer than 2 pairs left after
        skipping NaN, or a measured time <= 0.

    Examples
    --------
    >>> score([1.0, 2.0, 3.0], [1.0, 2.5, 2.0])["regret_top1_pct"]
    0.0
    """
    p, m = _pairs(predicted_ms, measured_ms)
    n_all = p.size
    keep = np.isfinite(p) & np.isfinite(m)
    p, m = p[keep], m[keep]
    if p.size < 2:
        raise InputError(f"only {p.size} of {n_all} configurations have both a predicted "
                         f"and a measured time; scoring needs at least 2")
    if np.any(m <= 0):
        raise InputError("measured times must be > 0 (milliseconds); found "
                         f"{m[m <= 0][0]!r}")
    result: dict[str, Any] = {"n": int(p.size), "skipped": int(n_all - p.size),
                              "mape_pct": _mape_pct(p, m), "spearman": _spearman(p, m)}
    for k in TOP_K:
        result[f"regret_top{k}_pct"] = _regret_pct(p, m, k)
    return result


def compare(predicted: KTCache | pd.DataFrame, measured: KTCache) -> dict[str, Any]:
    """Score predictions against a measured Kernel Tuner cache, configuration by configuration.

    Parameters
    ----------
    predicted
        A :class:`KTCache` (e.g. one :func:`write_cache` wrote), or a DataFrame with
        ``time_ms`` and either ``key`` (the cache key) or a column per tune parameter of
        ``measured``.
    measured
        The cache Kernel Tuner wrote while measuring (:func:`read_cache`).

    Returns
    -------
    dict
        What :func:`score` returns for the configurations in both (joined on the cache
        key), plus ``matched`` (configurations in both), ``predicted_configs`` and
        ``measured_configs``.

    Raises
    ------
    InputError
        Mismatched tune parameters, no configuration in common, or what :func:`score`
        raises.

    Examples
    --------
    >>> compare(read_cache("pred.json"), read_cache("measured.json"))  # doctest: +SKIP
    """
    if not isinstance(measured, KTCache):
        raise InputError(f"measured must be a KTCache (read_cache(path)), got "
                         f"{type(measured).__name__}")
    pred = _predicted_frame(predicted, measured)
    meas = measured.results[["key", "time_ms"]]
    joined = pred.merge(meas, on="key", suffixes=("_pred", "_meas"))
    if joined.empty:
        raise InputError(f"no configuration of the predictions is in the measured cache "
                         f"({measured.kernel_name} on {measured.device_name}); check that "
                         f"both use the same tune parameters and values")
    result = score(joined["time_ms_pred"], joined["time_ms_meas"])
    result.update(matched=len(joined), predicted_configs=len(pred),
                  measured_configs=len(meas))
    return result


def _pairs(predicted: Any, measured: Any) -> tuple[np.ndarray, np.ndarray]:
    try:
        p = np.asarray(predicted, dtype=float)
        m = np.asarray(measured, dtype=float)
    except (TypeError, ValueError):
        raise InputError("predicted and measured times must be numbers (use NaN for a "
                         "missing time)") from None
    if p.ndim != 1 or m.ndim != 1 or p.size != m.size:
        raise InputError(f"predicted and measured times must be 1-D and of equal length, "
                         f"got shapes {p.shape} and {m.shape}")
    return p, m


def _mape_pct(p: np.ndarray, m: np.ndarray) -> float:
    return float(np.mean(np.abs(p - m) / m) * 100.0)


def _spearman(p: np.ndarray, m: np.ndarray) -> float:
    if np.all(p == p[0]) or np.all(m == m[0]):
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        return float(stats.spearmanr(p, m).statistic)


def _regret_pct(p: np.ndarray, m: np.ndarray, k: int) -> float:
    first = np.argsort(p, kind="stable")[:k]
    return float((m[first].min() / m.min() - 1.0) * 100.0)


def _predicted_frame(predicted: KTCache | pd.DataFrame, measured: KTCache) -> pd.DataFrame:
    """``key`` and ``time_ms`` of the predictions, one row per configuration."""
    if isinstance(predicted, KTCache):
        if predicted.tune_params_keys != measured.tune_params_keys:
            raise InputError(f"the predicted cache tunes {predicted.tune_params_keys}, the "
                             f"measured one {measured.tune_params_keys}; compare caches "
                             f"of the same tune parameters, in the same order")
        frame = predicted.results
    elif isinstance(predicted, pd.DataFrame):
        frame = _with_key(predicted, measured.tune_params_keys)
    else:
        raise InputError(f"predicted must be a KTCache or a DataFrame, got "
                         f"{type(predicted).__name__}")
    if "time_ms" not in frame.columns:
        raise InputError("the predictions have no 'time_ms' column; name the predicted "
                         "times time_ms (milliseconds)")
    duplicated = frame["key"][frame["key"].duplicated()]
    if not duplicated.empty:
        raise InputError(f"configuration {duplicated.iloc[0]!r} is predicted more than "
                         f"once; give each configuration once")
    return frame[["key", "time_ms"]]


def _with_key(frame: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    if "key" in frame.columns:
        return frame
    missing = [n for n in names if n not in frame.columns]
    if missing:
        raise InputError(f"the predictions lack a 'key' column and tune parameter "
                         f"column(s) {missing}; add them")
    keys = [cache_key(values) for values in frame[names].itertuples(index=False)]
    return frame.assign(key=keys)

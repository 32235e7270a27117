"""``eiger``: Kerr et al.'s Eiger, statistical synthesis of a performance model.

A. Kerr, E. Anger, G. Hendry and S. Yalamanchili, "Eiger: a framework for the automated
synthesis of statistical performance models", WPEA 2012; evaluated by the survey
(Madougou et al. 2016, section 5.1, ``../shared/seeds/survey-gpgpu-performance-models.txt``).
Eiger's four steps, as kerncast runs them inside ``fit`` on the training kernels only:

1. **Data collection**: application and hardware metrics of every training launch.
   Application: what the SIMT emulator counts (``emulator`` work provider: fp32 and fp64
   operations, global bytes read and written, thread instructions; Eiger took these
   from Ocelot, a PTX emulator, and the survey from the profiler), the launch (blocks,
   threads per block, waves), the build (registers, shared memory) and the occupancy
   calculator (resident warps per SM); hardware: the spec (SMs, peak fp32 rate at the
   row's SM count, DRAM bandwidth, SM clock, L2 size). Counts enter as ``log2(1 + x)``:
   they span nine orders of magnitude, and standardised raw counts would leave every
   principal component to the few largest launches.
2. **Data analysis**: the metrics are standardised (training mean and deviation; a
   metric constant over the training rows, such as the spec values on a one-GPU
   dataset, is dropped) and reduced by PCA to the components that explain
   ``variance`` of the variance; the components are varimax-rotated, so that each
   relates strongly to a few metrics and weakly to the rest (Eiger's post-processing).
3. **Model selection**: forward selection from a pool of basis functions of the
   rotated components ``z``: linear ``z``, square ``z^2``, ``log u``, inverse ``1 / u``
   (``u = 1 + max(0, z - min z)``, flat below the training range) and the products
   ``z_i z_j`` of two. Each step adds the term that most lowers the cross-validated
   squared error, with folds grouped by kernel inside the training data; selection
   stops when no term lowers it by ``tol`` (relative) or at ``max_terms``.
4. **Model construction**: least squares of the response on the selected terms over
   all training rows.

The response is ``log2`` of the measured time, not the time: times span 3 µs to 0.1 s
and the error that matters is relative; a fit in seconds would serve the longest
launches only. A held-out launch's component scores are kept within the training range
before the basis functions are applied (squares and products of two otherwise grow
without bound outside it: ``gauss_multipliers`` at size medium, whose few blocks lie far
outside the other kernels' range, was predicted 570 times too slow without this), and
predictions are kept within the training times' range.

needs: ``source`` (the emulator runs the kernel) and ``spec``.
insight: ETP and OSE (the survey's Table 2): ``based_on`` lists the selected terms and
the metrics that load each component they use.

Not reproduced: Eiger's 47 metrics (kerncast has the 18 listed above; no cache,
divergence or memory-efficiency metrics from Ocelot's instrumentation), its exact pool
and the survey's setup (trained on one GPU and tested on another: here the split is by
kernel on one dataset). Launches the emulator cannot run (data-dependent addresses past
its input limit; blocks past its step limit, as 3 of mriq_compute's and 1 of
mc_option_paths's launches at size medium) get NaN, and are left out of training.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from kerncast._errors import InputError
from kerncast.data import Dataset
from kerncast.devices import get_device
from kerncast.models._base import Prediction, Predictor
from kerncast.models._rows import per_row
from kerncast.models.registry import register
from kerncast.models.work import WorkUnavailable
from kerncast.models.zoo._pram import launch_work, pram_platform

__all__ = ["Eiger", "basis_pool", "eiger_metrics", "forward_select", "term_values", "varimax"]


def _log(x: float) -> float:
    return math.log2(1.0 + max(float(x), 0.0))


def eiger_metrics(row: Mapping[str, Any], work: str = "emulator") -> dict[str, float]:
    """Step 1: the application and hardware metrics of one ``times`` row.

    Raises
    ------
    WorkUnavailable, InputError
        If the work cannot be counted or one block does not fit on an SM.
    """
    counts = launch_work(row, work)
    if counts.instructions is None:
        raise WorkUnavailable(f"the {counts.source} work source counts no instructions")
    hw = pram_platform(row)
    device = get_device(str(row["device"]))
    blocks, threads = int(row["blocks"]), int(row["threads_per_block"])
    share = hw.sm_count / device.compute.sm_count
    return {
        "flops_fp32": _log(counts.flops_fp32), "flops_fp64": _log(counts.flops_fp64),
        "bytes_read": _log(counts.bytes_global_read),
        "bytes_written": _log(counts.bytes_global_write),
        "instructions": _log(counts.instructions),
        "instructions_per_thread": _log(counts.instructions / (blocks * threads)),
        "bytes_per_thread": _log(counts.bytes_global / (blocks * threads)),
        "blocks": _log(blocks), "threads_per_block": _log(threads),
        "waves": _log(blocks / (hw.sm_count * hw.blocks_per_sm)),
        "registers": float(row.get("registers") or 0),
        "shared_bytes": _log(float(row.get("static_shared") or 0)
                             + float(row.get("dynamic_shared") or 0)),
        "resident_warps": float(hw.warps_per_sm),
        "sm_count": float(hw.sm_count), "peak_fp32_gflops": device.peak_fp32_gflops * share,
        "bandwidth_gbs": device.memory.peak_bandwidth_gbs,
        "clock_mhz": device.compute.boost_clock_mhz, "l2_kib": float(device.memory.l2_kib),
    }


def varimax(loadings: np.ndarray, iterations: int = 100, tol: float = 1e-8) -> np.ndarray:
    """The varimax rotation matrix of ``loadings`` (metrics x components)."""
    p, k = loadings.shape
    rotation = np.eye(k)
    if k < 2:
        return rotation
    previous = 0.0
    for _ in range(iterations):
        rotated = loadings @ rotation
        target = rotated**3 - rotated @ np.diag(np.sum(rotated**2, axis=0)) / p
        u, s, vt = np.linalg.svd(loadings.T @ target)
        rotation = u @ vt
        if s.sum() < previous * (1 + tol):
            break
        previous = s.sum()
    return rotation


def basis_pool(components: int) -> list[str]:
    """Step 3's pool: linear, square, log, inverse of each component, products of two."""
    single = [f"{kind}:{j}" for j in range(components) for kind in ("lin", "sq", "log", "inv")]
    pairs = [f"prod:{i}:{j}" for i in range(components) for j in range(i + 1, components)]
    return single + pairs


def term_values(z: np.ndarray, lows: np.ndarray, term: str) -> np.ndarray:
    """The values of one basis term (``kind:j`` or ``prod:i:j``) over the rows of ``z``."""
    kind, *index = term.split(":")
    j = int(index[0])
    if kind == "prod":
        return z[:, j] * z[:, int(index[1])]
    if kind == "lin":
        return z[:, j]
    if kind == "sq":
        return z[:, j] ** 2
    u = 1.0 + np.maximum(0.0, z[:, j] - lows[j])
    if kind == "log":
        return np.log(u)
    if kind == "inv":
        return 1.0 / u
    raise ValueError(f"unknown basis term {term!r}")


class _FoldGrams:
    """Cross-validated squared error of least squares on any subset of columns, from the
    Gram matrices of each fold (one pass over the data per fold)."""

    def __init__(self, x: np.ndarray, y: np.ndarray, groups: np.ndarray, folds: int):
        from sklearn.model_selection import GroupKFold  # noqa: PLC0415 (on use: scikit-learn)

        self.parts = []
        for train, test in GroupKFold(n_splits=folds).split(x, y, groups):
            xt, yt, xv, yv = x[train], y[train], x[test], y[test]
            self.parts.append((xt.T @ xt, xt.T @ yt, xv.T @ xv, xv.T @ yv, float(yv @ yv)))
        self.rows = len(y)

    def error(self, columns: list[int]) -> float:
        total = 0.0
        for gram, rhs, gram_test, rhs_test, yy in self.parts:
            g = gram[np.ix_(columns, columns)]
            coef = np.linalg.solve(g + 1e-9 * np.trace(g) * np.eye(len(columns)), rhs[columns])
            total += yy - 2 * coef @ rhs_test[columns] + coef @ gram_test[np.ix_(columns, columns)] @ coef
        return total / self.rows


def forward_select(x: np.ndarray, y: np.ndarray, groups: np.ndarray, *, folds: int = 5,
                   max_terms: int = 12, tol: float = 0.01) -> tuple[list[int], list[float]]:
    """Forward selection over the columns of ``x`` (column 0 is the intercept, always in):
    the chosen columns and the cross-validated error after each step."""
    cv = _FoldGrams(x, y, groups, min(folds, len(np.unique(groups))))
    chosen, path = [0], [cv.error([0])]
    while len(chosen) <= max_terms:
        errors = {c: cv.error(chosen + [c]) for c in range(1, x.shape[1]) if c not in chosen}
        if not errors:
            break
        best = min(errors, key=errors.__getitem__)
        if errors[best] > path[-1] * (1 - tol):
            break
        chosen.append(best)
        path.append(errors[best])
    return chosen, path


@register
class Eiger(Predictor):
    """Eiger: metrics, PCA, forward selection from a pool of basis functions (see the
    module docstring).

    Parameters
    ----------
    work
        Work provider of the application metrics.
    variance
        Share of the standardised metrics' variance the kept components explain.
    max_terms, tol
        When forward selection stops (at most ``max_terms`` terms; a step must lower the
        cross-validated error by ``tol``, relative).
    cv
        Folds (grouped by kernel) of the selection's cross-validation.
    """

    name = "eiger"
    needs = frozenset({"source", "spec"})
    description = ("Eiger: emulator and spec metrics, PCA with varimax, forward selection of "
                   "basis functions of the components by cross-validation; log time")
    insight = "ETP and OSE: the selected terms and the metrics behind each component"
    learned = True
    columns = ("kernel", "language", "size", "tunables", "device", "sm_count", "blocks",
               "threads_per_block", "registers", "static_shared", "dynamic_shared")

    def __init__(self, *, work: str = "emulator", variance: float = 0.95, max_terms: int = 12,
                 tol: float = 0.01, cv: int = 5):
        self.work = work
        self.variance = variance
        self.max_terms = max_terms
        self.tol = tol
        self.cv = cv

    # -- step 1 ---------------------------------------------------------------------------
    def _table(self, times: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
        """Metrics per row (NaN rows where they cannot be had) and the reason per row."""
        return per_row(times, lambda row: eiger_metrics(row, self.work),
                       (WorkUnavailable, InputError))

    # -- steps 2 to 4 ---------------------------------------------------------------------
    def _fit(self, dataset: Dataset) -> None:
        times = dataset.ok_times()
        times = times[np.isfinite(times["time_median_s"]) & (times["time_median_s"] > 0)]
        table, errors = self._table(times)
        keep = np.array([not e for e in errors], dtype=bool)
        table, times = table[keep], times[keep]
        if times["kernel"].nunique() < 2:
            raise InputError(f"eiger needs metrics of at least 2 training kernels, got "
                             f"{times['kernel'].nunique()}; train on more kernels")
        y = np.log2(times["time_median_s"].to_numpy(float))
        z = self._analyse(table)
        self._select(z, y, times["kernel"].to_numpy())
        self.log_time_range_ = [float(y.min()), float(y.max())]
        self.n_train_ = len(y)

    def _analyse(self, table: pd.DataFrame) -> np.ndarray:
        """Step 2: standardise, PCA, varimax; the rotated component scores."""
        std, level = table.std(axis=0, ddof=0), table.abs().max(axis=0)
        self.metrics_ = [c for c in table.columns if std[c] > 1e-9 * (1.0 + level[c])]
        values = table[self.metrics_].to_numpy(float)
        self.means_ = values.mean(axis=0)
        self.scales_ = values.std(axis=0)
        standard = (values - self.means_) / self.scales_
        _, s, vt = np.linalg.svd(standard, full_matrices=False)
        share = np.cumsum(s**2) / np.sum(s**2)
        k = int(np.searchsorted(share, self.variance) + 1)
        loadings = vt[:k].T
        self.components_ = loadings @ varimax(loadings)
        z = standard @ self.components_
        self.lows_, self.highs_ = z.min(axis=0), z.max(axis=0)
        return z

    def _design(self, z: np.ndarray, terms: list[str]) -> np.ndarray:
        return np.column_stack([np.ones(len(z))] + [term_values(z, self.lows_, t) for t in terms])

    def _select(self, z: np.ndarray, y: np.ndarray, kernels: np.ndarray) -> None:
        """Steps 3 and 4: forward selection by grouped cross-validation, then the fit."""
        pool = basis_pool(z.shape[1])
        chosen, path = forward_select(self._design(z, pool), y, kernels, folds=self.cv,
                                      max_terms=self.max_terms, tol=self.tol)
        self.terms_ = [pool[c - 1] for c in chosen[1:]]
        self.cv_error_path_ = [float(e) for e in path]
        design = self._design(z, self.terms_)
        self.coef_, *_ = np.linalg.lstsq(design, y, rcond=None)

    # -- prediction -----------------------------------------------------------------------
    def explain(self, dataset: Dataset) -> list[Prediction]:
        """Seconds per row, with the selected terms and the metrics behind them."""
        self._check_fitted()
        times = dataset.times
        table, errors = self._table(times)
        seconds = np.full(len(times), np.nan)
        ok = np.array([not e for e in errors], dtype=bool)
        if ok.any():
            values = table.loc[ok, self.metrics_].to_numpy(float)
            z = np.clip((values - self.means_) / self.scales_ @ self.components_,
                        self.lows_, self.highs_)
            low, high = self.log_time_range_
            log_time = np.clip(self._design(z, self.terms_) @ self.coef_, low, high)
            seconds[ok] = np.exp2(log_time)
        basis = {"terms": list(self.terms_), "components": self._component_metrics(),
                 "trained_rows": self.n_train_}
        return [Prediction(float(s), self.name, based_on=basis if not e else {"error": e})
                for s, e in zip(seconds, errors)]

    def _component_metrics(self) -> dict[str, list[str]]:
        """The metrics that load each component (|loading| >= 0.3), strongest first."""
        out = {}
        for j in range(self.components_.shape[1]):
            column = self.components_[:, j]
            order = np.argsort(-np.abs(column))
            out[f"z{j}"] = [self.metrics_[i] for i in order if abs(column[i]) >= 0.3]
        return out

"""``stargazer``: Jia et al.'s Stargazer, stepwise regression with splines.

W. Jia, K. A. Shaw and M. Martonosi, "Stargazer: automated regression-based GPU design
space exploration", ISPASS 2012; evaluated by the survey (Madougou et al. 2016, section
5.2, ``../shared/seeds/survey-gpgpu-performance-models.txt``).

Stargazer samples a design space sparsely, measures (or simulates) each sample, and fits
a stepwise linear regression whose terms are restricted cubic splines of the parameters
(and interactions of two), to predict time and name the parameters that matter most.
Here the design space is what a user knows about a launch and its device, fitted on the
training kernels' measured times (the dataset is the sample):

* the launch: ``log2`` of threads per block, of blocks, of block x and y, and the
  tunables that at least ``min_share`` of the training kernels share (``log2(1 + v)``;
  0 where a kernel has no such tunable): a tunable only a few kernels have (``ilp``,
  ``unroll``) means something else in each and would only tell those kernels apart;
* the problem size: ``log2`` of the bytes of the launch's buffers, and of the threads;
* the hardware configuration: ``log2`` SM count, and the device's spec values (DRAM
  bandwidth, SM clock, L2 size, spec SMs, fp32 lanes), which vary only when the data
  holds several devices (a constant parameter is dropped).

Each parameter with at least ``knots`` distinct values enters as a group: its linear
term and the ``knots - 2`` terms of Harrell's restricted cubic spline (knots at the
5/35/65/95% quantiles for 4 knots; linear beyond the outer knots); others as a linear
term. Interactions are products of two standardised linear terms. Stepwise selection
over these groups minimises BIC: each step adds the group that lowers it most, then
drops any group whose removal lowers it. The response is ``log2`` of the time (times
span five orders of magnitude and the error that matters is relative).

Influence: each selected group's share of the residual sum of squares it removes (the
increase when it alone is dropped from the final model); ``influence_`` ranks them and
every prediction's ``based_on`` names the top three.

needs: ``spec`` (only the launch, the problem size and the device).
insight: ETP, PBA (which parameters drive time) and OSE (the survey's Table 2).

Not reproduced: the hardware design space itself (GPGPU-Sim's cores, SIMD width,
caches, coalescing and block-concurrency parameters): only the SM count and the two
devices' specs vary in kerncast's data, and with one device per dataset the spec values
are dropped as constant. Stargazer fits one model per application over hardware
parameters; here one model serves all kernels and is tested on kernels it never saw, a
harder task its parameters (no description of what a kernel does) are not made for.
Rows of kernels outside the corpus (no buffer sizes) get NaN.
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
from kerncast.models._rows import corpus_launch, per_row, tunables_of
from kerncast.models.registry import register

__all__ = ["Stargazer", "bic", "launch_parameters", "rcs_basis", "rcs_knots"]

_QUANTILES = {3: (0.10, 0.50, 0.90), 4: (0.05, 0.35, 0.65, 0.95),
              5: (0.05, 0.275, 0.50, 0.725, 0.95)}


def rcs_knots(values: np.ndarray, knots: int) -> np.ndarray:
    """Harrell's default knots (quantiles) of ``values``; fewer when values repeat."""
    quantiles = _QUANTILES.get(knots, tuple(np.linspace(0.05, 0.95, knots)))
    return np.unique(np.quantile(values, quantiles))


def rcs_basis(x: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """The ``len(knots) - 2`` nonlinear terms of a restricted cubic spline (Harrell's
    form, scaled by ``(t_k - t_1)^2``): cubic between the knots, linear beyond."""
    t = np.asarray(knots, dtype=float)
    k = len(t)
    x = np.asarray(x, dtype=float)
    if k < 3:
        return np.empty((len(x), 0))
    scale = (t[-1] - t[0]) ** 2

    def cube(a: float) -> np.ndarray:
        return np.maximum(0.0, x - a) ** 3

    span = t[-1] - t[-2]
    terms = [(cube(t[j]) - cube(t[-2]) * (t[-1] - t[j]) / span
              + cube(t[-1]) * (t[-2] - t[j]) / span) / scale for j in range(k - 2)]
    return np.column_stack(terms)


def bic(rss: float, rows: int, terms: int) -> float:
    """Bayesian information criterion of a least-squares fit."""
    return rows * math.log(max(rss, 1e-300) / rows) + terms * math.log(rows)


def launch_parameters(row: Mapping[str, Any], tunables: list[str]) -> dict[str, float]:
    """The parameters of one ``times`` row (see the module docstring).

    Raises
    ------
    InputError
        If the row's kernel is not in the corpus (no buffer sizes).
    """
    kernel, config = corpus_launch(row)
    device = get_device(str(row["device"]))
    values = tunables_of(row)
    blocks, threads = int(row["blocks"]), int(row["threads_per_block"])
    out = {"threads_per_block": math.log2(threads), "blocks": math.log2(blocks),
           "block_x": math.log2(max(int(row.get("block_x") or threads), 1)),
           "block_y": math.log2(max(int(row.get("block_y") or 1), 1)),
           "data_bytes": math.log2(max(kernel.buffer_bytes(config), 1)),
           "threads": math.log2(blocks * threads),
           "sm_count": math.log2(max(int(row.get("sm_count") or device.compute.sm_count), 1)),
           "bandwidth_gbs": device.memory.peak_bandwidth_gbs,
           "clock_mhz": device.compute.boost_clock_mhz, "l2_kib": float(device.memory.l2_kib),
           "spec_sm_count": float(device.compute.sm_count),
           "fp32_lanes": float(device.throughput.fp32)}
    out.update({f"tunable:{name}": math.log2(1 + max(values.get(name, 0), 0))
                for name in tunables})
    return out


class _Gram:
    """Residual sums of squares of least squares on any subset of columns."""

    def __init__(self, x: np.ndarray, y: np.ndarray):
        self.gram, self.rhs, self.yy, self.rows = x.T @ x, x.T @ y, float(y @ y), len(y)

    def rss(self, columns: list[int]) -> float:
        g = self.gram[np.ix_(columns, columns)]
        coef = np.linalg.solve(g + 1e-10 * np.trace(g) * np.eye(len(columns)), self.rhs[columns])
        return max(self.yy - float(coef @ self.rhs[columns]), 0.0)


def _stepwise(gram: _Gram, groups: dict[str, list[int]], max_steps: int) -> list[str]:
    """Bidirectional stepwise selection of ``groups`` (column lists; column 0, the
    intercept, is always in) by BIC."""
    chosen: list[str] = []

    def score(names: list[str]) -> float:
        columns = [0] + [c for n in names for c in groups[n]]
        return bic(gram.rss(columns), gram.rows, len(columns))

    current = score(chosen)
    for _ in range(max_steps):
        trials = {g: score(chosen + [g]) for g in groups if g not in chosen}
        if not trials or min(trials.values()) >= current:
            break
        chosen.append(min(trials, key=trials.__getitem__))
        current = min(trials.values())
        drops = {g: score([n for n in chosen if n != g]) for g in chosen[:-1]}
        if drops and min(drops.values()) < current:
            dropped = min(drops, key=drops.__getitem__)
            chosen.remove(dropped)
            current = drops[dropped]
    return chosen


@register
class Stargazer(Predictor):
    """Stargazer: stepwise regression with restricted cubic splines over launch, problem
    size and hardware parameters (see the module docstring).

    Parameters
    ----------
    knots
        Knots of each parameter's restricted cubic spline (3 to 5).
    interactions
        Whether products of two parameters are candidate groups.
    min_share
        Share of the training kernels that must have a tunable for it to be a parameter.
    max_steps
        Most stepwise steps.
    """

    name = "stargazer"
    needs = frozenset({"spec"})
    description = ("Stargazer: stepwise (BIC) linear regression of log time on restricted cubic "
                   "splines of launch, problem-size, SM-count and device parameters")
    insight = "ETP, PBA and OSE: the most influential launch and hardware parameters"
    learned = True
    columns = ("kernel", "size", "tunables", "device", "sm_count", "blocks",
               "threads_per_block", "block_x", "block_y")

    def __init__(self, *, knots: int = 4, interactions: bool = True, min_share: float = 0.25,
                 max_steps: int = 40):
        self.knots = knots
        self.interactions = interactions
        self.min_share = min_share
        self.max_steps = max_steps

    def _parameters(self, times: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
        return per_row(times, lambda row: launch_parameters(row, self.tunables_), (InputError,))

    def _fit(self, dataset: Dataset) -> None:
        times = dataset.ok_times()
        times = times[np.isfinite(times["time_median_s"]) & (times["time_median_s"] > 0)]
        self.tunables_ = _shared_tunables(times, self.min_share)
        table, errors = self._parameters(times)
        keep = np.array([not e for e in errors], dtype=bool)
        table, times = table[keep], times[keep]
        if times["kernel"].nunique() < 2:
            raise InputError(f"stargazer needs at least 2 training kernels of the corpus, got "
                             f"{times['kernel'].nunique()}; train on more kernels")
        spread, level = table.std(axis=0, ddof=0), table.abs().max(axis=0)
        self.parameters_ = [c for c in table.columns if spread[c] > 1e-9 * (1.0 + level[c])]
        values = table[self.parameters_].to_numpy(float)
        self.means_, self.scales_ = values.mean(axis=0), values.std(axis=0)
        self.knots_ = {p: rcs_knots(values[:, i], self.knots).tolist()
                       for i, p in enumerate(self.parameters_)}
        y = np.log2(times["time_median_s"].to_numpy(float))
        x, groups = self._candidates(values)
        gram = _Gram(x, y)
        self.groups_ = _stepwise(gram, groups, self.max_steps)
        self._finish(x, y, groups, gram)

    def _candidates(self, values: np.ndarray) -> tuple[np.ndarray, dict[str, list[int]]]:
        """Every candidate column (intercept first) and the groups that own them."""
        standard = (values - self.means_) / self.scales_
        blocks, groups = [np.ones((len(values), 1))], {}
        column = 1
        for i, p in enumerate(self.parameters_):
            part = np.column_stack([standard[:, i], rcs_basis(standard[:, i],
                                                              self._scaled_knots(i))])
            blocks.append(part)
            groups[p] = list(range(column, column + part.shape[1]))
            column += part.shape[1]
        if self.interactions:
            for i in range(len(self.parameters_)):
                for j in range(i + 1, len(self.parameters_)):
                    blocks.append((standard[:, i] * standard[:, j])[:, None])
                    groups[f"{self.parameters_[i]} x {self.parameters_[j]}"] = [column]
                    column += 1
        return np.column_stack(blocks), groups

    def _scaled_knots(self, i: int) -> np.ndarray:
        knots = np.asarray(self.knots_[self.parameters_[i]], dtype=float)
        return (knots - self.means_[i]) / self.scales_[i]

    def _finish(self, x: np.ndarray, y: np.ndarray, groups: dict[str, list[int]],
                gram: _Gram) -> None:
        """The final least squares on the chosen groups, and each group's influence."""
        self.columns_ = [0] + [c for g in self.groups_ for c in groups[g]]
        self.coef_, *_ = np.linalg.lstsq(x[:, self.columns_], y, rcond=None)
        full = gram.rss(self.columns_)
        gains = {g: gram.rss([c for c in self.columns_ if c not in groups[g]]) - full
                 for g in self.groups_}
        total = sum(gains.values()) or 1.0
        self.influence_ = {g: float(v / total)
                           for g, v in sorted(gains.items(), key=lambda kv: -kv[1])}
        self.log_time_range_ = [float(y.min()), float(y.max())]
        self.n_train_ = len(y)

    def explain(self, dataset: Dataset) -> list[Prediction]:
        """Seconds per row, with the most influential parameters of the fitted model."""
        self._check_fitted()
        table, errors = self._parameters(dataset.times)
        seconds = np.full(len(table), np.nan)
        ok = np.array([not e for e in errors], dtype=bool)
        if ok.any():
            x, _ = self._candidates(table.loc[ok, self.parameters_].to_numpy(float))
            low, high = self.log_time_range_
            log_time = np.clip(x[:, self.columns_] @ self.coef_, low, high)
            seconds[ok] = np.exp2(log_time)
        top = dict(list(self.influence_.items())[:3])
        return [Prediction(float(s), self.name,
                           based_on={"most_influential": top, "groups": len(self.groups_)}
                           if not e else {"error": e})
                for s, e in zip(seconds, errors)]


def _shared_tunables(times: pd.DataFrame, min_share: float) -> list[str]:
    """Tunable names that at least ``min_share`` of the kernels of ``times`` have."""
    owners: dict[str, set[str]] = {}
    for kernel, raw in times[["kernel", "tunables"]].drop_duplicates().itertuples(index=False):
        for name in tunables_of({"kernel": kernel, "tunables": raw}):
            owners.setdefault(name, set()).add(str(kernel))
    kernels = times["kernel"].nunique()
    return sorted(n for n, ks in owners.items() if len(ks) >= min_share * kernels)

"""``gpu-random-forest``: a random forest of log time on the log of 23 counters.

Paper: Y. Zhang, Y. Hu, B. Li, L. Peng, "Performance and power analysis of ATI GPU: a
statistical approach", NAS 2011 (the survey's [39], its section 5.3). R's randomForest
on 23 counters of AMD's Stream Profiler, for 22 kernels on a Radeon HD 5870: R^2 79.7%,
median absolute error 13.1%; its use is as much the variable importance (which counters
drive performance) as the prediction. The survey rebuilt it on an HD 7970 with every
counter the profiler had and the execution time as the response.

kerncast: scikit-learn's ``RandomForestRegressor`` with R's regression defaults (500
trees, a third of the variables tried at each split, leaves of at least 5 rows), fitted
in ``fit`` on the training kernels' launches that have counters; response ``log`` of the
measured time, variables ``log(1 + x)`` of 23 counters of the launch (:data:`FEATURES`).
Each counter stands for one of the paper's kinds of Stream Profiler counter (launch size,
instruction mix by unit, fetch and write traffic, caches, LDS, branching, occupancy);
the Stream Profiler name of the same kind is given beside it. The survey's own reading
names SFetchInsts, MemUnitStalled and WriteUnitStalled for BFS and ALU counters for
HotSpot; the paper's exact list of 23 is not in the survey, so the pairing is by kind.

Variable importance, as the paper's randomForest reports it: the impurity decrease
(``feature_importances_``, the paper's IncNodePurity) and the permutation importance
(the loss of R^2 when a counter is shuffled, the paper's %IncMSE, computed here on the
training rows), both from :meth:`GpuRandomForest.importance` and in every explanation.

Needs: ``counters`` (no spec: the forest knows no hardware, the survey's "hardware
knowledge: none"). Insight: ETP, PBA and OSE (the survey's Table 2): the time, and
which counters it depends on.

Not reproduced, and why: AMD's counters (an NVIDIA GPU is measured: Nsight Compute
analogues by kind); the busy and stall percentages among the paper's counters
(ALUBusy, FetchUnitBusy, FetchUnitStalled, WriteUnitStalled): their Nsight analogues
are normalised by the run's own cycles and, with the work counts, give the measured time
back, so kerncast leaves every time-derived counter out (see ``components``); the
paper's response, throughput, is replaced by the time, as the survey did. A forest
cannot extrapolate: a held-out kernel slower or faster than every training launch gets
the nearest training times.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from kerncast._errors import InputError
from kerncast.data import KEY_COLUMNS, Dataset
from kerncast.models._base import LaunchInputs, Prediction, Predictor
from kerncast.models.registry import register
from kerncast.models.zoo._components import OCCUPANCY, counters_needed, launch_counters, metric

__all__ = ["FEATURES", "GpuRandomForest", "forest_features", "permutation_importance"]

#: The 23 variables: a counter (or launch column) of the launch, with the Stream
#: Profiler counter of the same kind.
FEATURES: dict[str, str] = {
    "smsp__warps_launched.sum": "Wavefronts",
    "threads": "GlobalWorkSize",
    "threads_per_block": "GroupWorkSize",
    "registers": "GPRs",
    "shared_bytes": "LDS (bytes per work-group)",
    "smsp__inst_executed.sum": "ALUInsts + FetchInsts + WriteInsts (all instructions)",
    "smsp__inst_executed_pipe_fma.sum": "ALUInsts (FP32)",
    "smsp__inst_executed_pipe_alu.sum": "ALUInsts (integer and logic)",
    "smsp__inst_executed_pipe_fp64.sum": "ALUInsts (FP64)",
    "smsp__inst_executed_pipe_xu.sum": "ALUInsts (transcendental unit)",
    "smsp__inst_executed_op_global_ld.sum": "FetchInsts",
    "smsp__inst_executed_op_global_st.sum": "WriteInsts",
    "smsp__inst_executed_op_shared_ld.sum": "LDSFetchInsts",
    "smsp__inst_executed_op_shared_st.sum": "LDSWriteInsts",
    "shared_bank_conflicts": "LDSBankConflict",
    "dram__bytes_read.sum": "FetchMem (FetchSize)",
    "dram__bytes_write.sum": "WriteSize",
    "l1tex__t_sector_hit_rate.pct": "CacheHit (L1)",
    "lts__t_sector_hit_rate.pct": "CacheHit (L2)",
    "l1tex__t_sectors.sum": "FetchMem at L1 (coalescing: sectors)",
    "smsp__thread_inst_executed_per_inst_executed.ratio": "ALUPacking (SIMD efficiency)",
    "smsp__sass_branch_targets_threads_divergent.sum": "branch divergence (CFInsts)",
    OCCUPANCY: "occupancy (Wavefronts resident)",
}
_DERIVED = {
    "threads": lambda c: metric(c, "blocks") * metric(c, "threads_per_block"),
    "shared_bytes": lambda c: metric(c, "static_shared") + metric(c, "dynamic_shared"),
    "shared_bank_conflicts": lambda c: (
        metric(c, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
        + metric(c, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")),
}


def forest_features(counters: Mapping[str, Any]) -> np.ndarray:
    """The 23 variables of one launch, ``log(1 + x)`` (an absent counter counts as 0)."""
    values = [_DERIVED[name](counters) if name in _DERIVED else metric(counters, name)
              for name in FEATURES]
    return np.log1p(np.clip(np.asarray(values, dtype=float), 0.0, None))


def _training_rows(dataset: Dataset) -> tuple[np.ndarray, np.ndarray]:
    rows = dataset.times
    found = launch_counters(dataset)
    x, y = [], []
    for t, c in zip(rows.to_dict("records"), found):
        seconds = float(t.get("time_median_s", np.nan))
        if c is None or t.get("status", "ok") != "ok" or not seconds > 0:
            continue
        x.append(forest_features(c))
        y.append(np.log(seconds))
    return np.asarray(x, dtype=float).reshape(-1, len(FEATURES)), np.asarray(y, dtype=float)


def _r2(y: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """R^2 of each row of ``predicted`` against ``y``."""
    total = float(np.sum((y - y.mean()) ** 2)) or 1.0
    return 1.0 - np.sum((predicted - y) ** 2, axis=-1) / total


#: Rows predicted in one call of the permutation importance (bounds its memory).
_BATCH_ROWS = 200_000


def permutation_importance(model: Any, x: np.ndarray, y: np.ndarray, repeats: int,
                           seed: int) -> np.ndarray:
    """Mean loss of R^2 when each column of ``x`` is shuffled (``repeats`` times; the
    shuffled copies of several columns are predicted in one call)."""
    rng = np.random.default_rng(seed)
    n, p = x.shape
    base = float(_r2(y, model.predict(x)))
    step = max(1, _BATCH_ROWS // max(1, repeats * n))
    out = np.empty(p)
    for first in range(0, p, step):
        cols = range(first, min(p, first + step))
        copies = np.repeat(x[None, None], len(cols), axis=0).repeat(repeats, axis=1)
        for i, j in enumerate(cols):
            for r in range(repeats):
                copies[i, r, :, j] = x[rng.permutation(n), j]
        shuffled = model.predict(copies.reshape(-1, p)).reshape(len(cols), repeats, n)
        out[first:first + len(cols)] = base - _r2(y, shuffled).mean(axis=1)
    return out


@register
class GpuRandomForest(Predictor):
    """A random forest of log time on 23 counters, with variable importance.

    Parameters
    ----------
    n_estimators, max_features, min_samples_leaf
        The forest (R's randomForest defaults for regression: 500 trees, a third of the
        variables per split, leaves of 5 rows).
    n_repeats
        Shuffles of each counter for the permutation importance.
    seed
        Seeds the forest and the permutations.
    """

    name = "gpu-random-forest"
    needs = frozenset({"counters"})
    description = ("Zhang et al. (NAS'11): a random forest of log time on the log of 23 "
                   "Nsight Compute counters, with variable importance")
    insight = "ETP, PBA and OSE: the time and which counters drive it (variable importance)"
    learned = True
    columns = KEY_COLUMNS

    def __init__(self, *, n_estimators: int = 500, max_features: float = 1 / 3,
                 min_samples_leaf: int = 5, n_repeats: int = 3, seed: int = 0):
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.min_samples_leaf = min_samples_leaf
        self.n_repeats = n_repeats
        self.seed = seed

    def _fit(self, dataset: Dataset) -> None:
        from sklearn.ensemble import RandomForestRegressor  # noqa: PLC0415 (on use: scikit-learn)

        x, y = _training_rows(dataset)
        if len(y) < 2:
            raise InputError(f"gpu-random-forest needs at least 2 launches with counters and a "
                             f"measured time to learn from, got {len(y)}; measure counters "
                             "(kerncast measure corpus --experiments counters)")
        forest = RandomForestRegressor(
            n_estimators=self.n_estimators, max_features=self.max_features,
            min_samples_leaf=self.min_samples_leaf, oob_score=len(y) >= 10,
            random_state=self.seed, n_jobs=1)
        forest.fit(x, y)
        perm = permutation_importance(forest, x, y, self.n_repeats, self.seed)
        self.model_ = forest
        self.n_train_ = len(y)
        self.oob_r2_ = float(forest.oob_score_) if len(y) >= 10 else float("nan")
        self.importance_impurity_ = dict(zip(FEATURES, map(float, forest.feature_importances_)))
        self.importance_permutation_ = dict(zip(FEATURES, map(float, perm)))

    def importance(self, kind: str = "permutation") -> list[tuple[str, float]]:
        """The counters by importance, largest first: ``"permutation"`` (loss of R^2 when
        the counter is shuffled) or ``"impurity"`` (mean decrease of the squared error)."""
        self._check_fitted()
        table = {"permutation": self.importance_permutation_,
                 "impurity": self.importance_impurity_}.get(kind)
        if table is None:
            raise InputError(f"importance kind {kind!r} is not one of permutation, impurity")
        return sorted(table.items(), key=lambda item: -item[1])

    def _predict(self, dataset: Dataset) -> np.ndarray:
        found = launch_counters(dataset)
        out = np.full(len(found), np.nan)
        rows = [i for i, c in enumerate(found) if c is not None]
        if rows:
            x = np.vstack([forest_features(found[i]) for i in rows])  # type: ignore[arg-type]
            out[rows] = np.exp(self.model_.predict(x))
        return out

    def explain(self, dataset: Dataset) -> list[Prediction]:
        """Each row's time with the forest's variable importance (top 8 of each kind)."""
        seconds = self.predict(dataset)
        based_on = {"importance_permutation": self.importance("permutation")[:8],
                    "importance_impurity": self.importance("impurity")[:8],
                    "oob_r2": self.oob_r2_, "trained_launches": self.n_train_}
        return [Prediction(float(s), self.name, based_on=dict(based_on) if s == s else
                           {"error": "no counters of this launch"}) for s in seconds]

    def explain_launch(self, kernel: Any, launch: Any, inputs: LaunchInputs) -> Prediction:
        """Not possible: the counters are those of the launch's own run."""
        raise counters_needed(self.name)

"""``combined``: a stack of the registered models, beyond the survey.

The survey (Madougou et al. 2016, ``../shared/seeds/survey-gpgpu-performance-models.txt``,
its section 8 and Table 2) finds no model both accurate and simple, and expects the
answer to be "a combination of models, heavily supported by tools". ``combined`` is one:
it predicts a launch from the predictions of other registered models (its *bases*),
weighted by how well each did on kernels it had not seen.

What it combines: ``bases`` names registered models; by default every registered model
except those in :data:`DEFAULT_EXCLUDED` (measured too slow to predict every training
launch of a dataset, or to refit several times per fit, for what they add), so that a
model registered later joins without a change here. ``static`` is a default base although
it is slow (about 1-2 s per launch on two cores, paid once per launch: a model that
learns nothing is asked once per kernel and its answers kept): it is the most accurate
model that answers every launch, and a combination without it is worse than it alone.

How, in ``fit`` (the training kernels only; the harness holds the test kernels out):

1. **Out-of-fold base predictions.** The training kernels are split into
   ``inner_folds`` groups by kernel (kernel ``i`` of the sorted names in group
   ``i mod inner_folds``). A learned base is fitted on the other groups and predicts
   each group's launches; a base that learns nothing predicts every launch directly.
   No base ever predicts a launch of a kernel it was fitted on. A base that raises on a
   kernel, or cannot fit, leaves its rows missing (NaN).
2. **One expert per answer pattern.** The rows are grouped by which bases answered
   (counter models answer only launches with counters, sampling models only sampled
   launches, ...). For each pattern seen on at least :data:`MIN_KERNELS` kernels, an
   expert is fitted on every row where those bases answered. Its *blend* is a weighted
   geometric mean of some of their predictions times a factor,
   ``t = c * prod_i t_i ** w_i`` with ``w_i >= 0`` and ``sum_i w_i = 1`` (on a grid of
   1/20), so that it never leaves the range the bases span but for the factor; the
   bases enter by forward selection, each step adding the one that most lowers the
   expert's error on held-out kernels (``inner_folds`` folds by kernel over the training
   kernels), at most ``max_terms``. Where a *selector* does at least 10% better held out
   (a tree of depth 3 on the launch, :func:`row_features`, and the bases' predictions
   that picks the base nearest the measured time), it replaces the blend.
3. **The bases again, on every training kernel**, for prediction.

``loss`` is what the weights, the factor and the held-out error minimise: ``mape`` (the
default) the mean absolute percentage error the harness reports, so the factor is the
median of measured over blended time weighted by blended over measured; ``log`` the mean
absolute log error, the factor the plain median ratio. They differ where the bases
scatter: a percentage error punishes a time predicted too long more than one too short,
so ``mape`` shades such predictions low (on launches only the launch-shape models answer,
a far lower mean error and a higher median one than ``log``); where one base is right on
most launches and far off on the rest, ``mape`` keeps it exact where it is right, and
the median ratio does not.

In ``predict``: every base predicts the rows (kernel by kernel); each row goes to the
expert of the largest answer pattern among the bases that answered it (ties: the lower
held-out error). A row gets NaN only where no base answers (or none of the answering
bases has an expert). Each explanation names the bases that answered and their times,
how they were combined (``blend`` or ``select``) with each base's weight, the expert's
held-out error, and the bottleneck of the most weighted base that names one.

needs: ``spec`` only. The union of the default bases' needs is ``counters``,
``sampled_runs``, ``source`` and ``spec``, but ``combined`` answers without counters,
sampled runs or source, from the bases that need neither (``launch-regression``,
``stargazer``); where they are met, ``static`` (the kernel's source) and the counter and
sampling models join in. Needs of bases outside the defaults (``cpu_code`` for ``xapp``,
``base_config_run`` for ``scaling-surfaces``) are used the same way, where met.

Why blends and a shallow selector, not a gradient-boosted model of log time on the
bases' predictions, the answer indicators and the launch: held out by kernel on
``data/h100`` the trees overfit the 58 kernels (on the launches with counters: 91% mean
error trained on every row, 46-53% as a correction of the bases, against 25% for the
best single model, ``qa``).

Measured (``benchmarks/zoo_accuracy.py``, 5 folds by kernel; 3 launch configurations
per kernel and size among the launches with counters on ``data/h100``, the 148 of them
that every model predicting at least 90% of them predicts): ``combined`` 9.9% MAPE
(median 6.4%, Spearman 0.81) against 16.2% for ``static`` (median 8.8%, Spearman 0.84),
the best single model. The gain is where a launch has sampled runs (50 of the 161 rows,
size large): there the experts lean on ``sampling``, 3.6% against ``static``'s 27.7%. On
the 111 rows without them it is 12.8% against ``static``'s 12.1%. Without ``static``
among its bases it was 18.2%; with every model that predicts 90% of the rows but not the
sampling models, 16.6%. On ``data/h200`` (the default launch of each kernel and size, 159
common rows): 11.1% against 17.2% for ``static``; 3.9% against 26.7% on the 50 sampled
launches, 14.0% against 14.2% on the other 122.

Limits: it is no better than its bases where they share their mistakes (the counter
models all read the same counters and under-predict the same latency-bound kernels); a
launch that only the launch-shape models answer is predicted about as badly as they do;
where no sampled run exists it is about as accurate as ``static`` alone (the counter
models add little to it); the default bases leave out the other models that emulate
kernels (:data:`DEFAULT_EXCLUDED`); a fit costs
``inner_folds + 1`` fits of every learned base; it predicts the rows of a dataset, not
one launch (:meth:`explain_launch`). ``benchmarks/zoo_accuracy.py`` scores it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from kerncast._errors import InputError
from kerncast.data import Dataset
from kerncast.models._base import LaunchInputs, Prediction, Predictor
from kerncast.models.registry import get_predictor, list_predictors, predictor_class, register

__all__ = ["DEFAULT_EXCLUDED", "MEMO_KERNELS", "MIN_KERNELS", "Combined", "Plan", "base_answers",
           "blend_fit", "default_bases", "fit_experts", "forward_select", "out_of_fold",
           "row_features", "simplex"]

TARGET = "time_median_s"
#: Models left out of the default bases, and why (measured on data/h100 on 2 CPU cores;
#: a model that learns nothing is asked once per launch, a learned one is refitted
#: ``inner_folds + 1`` times per fit).
DEFAULT_EXCLUDED: dict[str, str] = {
    "combined": "itself",
    "mwp-cwp": "emulates a round of blocks of each launch: about 0.7 s per launch",
    "roofline": "its work counts come from the emulator, about 0.3 s per launch (the "
                "algorithmic counts cover 3 of the 58 corpus kernels)",
    "gpu-pram": "the emulator's work counts, about 0.3 s per launch",
    "eiger": "the emulator's work counts of every training launch, in each fit",
    "pmac": "the emulator's work counts of every launch",
    "xapp": "a fit takes about 13 s and it answers only each kernel's default launch",
    "scaling-surfaces": "a fit takes about 9 s (k-means and a network per cluster set) and it "
                        "answers only launches at another SM count or device than its base run",
}
#: The size column's values as a number, for the selector.
SIZES = {"small": 0.0, "medium": 1.0, "large": 2.0}
#: Depth of the selector's tree, and how much lower than the blend's its held-out error
#: must be for it to replace the blend (a choice of one base jumps where a blend is smooth).
_SELECTOR_DEPTH = 3
_SELECT_MARGIN = 0.1
#: Fewest kernels an answer pattern needs for an expert of its own.
MIN_KERNELS = 2
#: Relative improvement of the held-out error a further term must bring.
_TOL = 0.01


def default_bases() -> list[str]:
    """Every registered model except :data:`DEFAULT_EXCLUDED`."""
    return [n for n in list_predictors() if n not in DEFAULT_EXCLUDED]


# -- the bases' answers --------------------------------------------------------------------

def _targets(dataset: Dataset) -> Dataset:
    """The rows with a measured time (status ok, positive), in ``dataset``'s order."""
    t = dataset.ok_times()
    seconds = pd.to_numeric(t[TARGET], errors="coerce") if TARGET in t else pd.Series(dtype=float)
    keep = np.isfinite(seconds.to_numpy(dtype=float)) & (seconds.to_numpy(dtype=float) > 0)
    return replace(dataset, times=t[keep].reset_index(drop=True))


def _shown(dataset: Dataset) -> Dataset:
    """``dataset`` without its measured times (what a base may see of a launch it predicts)."""
    times = dataset.times
    return replace(dataset, times=times.drop(columns=[c for c in times
                                                      if str(c).startswith("time_")]))


def _explained(model: Predictor, part: Dataset) -> tuple[np.ndarray, list[str]]:
    if model.explains_rows:
        explained = model.explain(part)
        return (np.array([p.seconds for p in explained], dtype=float),
                [p.bottleneck for p in explained])
    return model.predict(part), ["unknown"] * len(part.times)


def base_answers(model: Predictor, dataset: Dataset) -> tuple[np.ndarray, list[str]]:
    """``model``'s seconds (NaN where it cannot answer) and bottleneck for each row of
    ``dataset.times``, kernel by kernel: a kernel the model raises on gets NaN. The answers
    of a model that learns nothing are kept (:data:`MEMO_KERNELS`) and reused for the
    same kernel's same tables."""
    times = dataset.times
    seconds = np.full(len(times), np.nan)
    bottleneck = ["unknown"] * len(times)
    kernels = times["kernel"].to_numpy() if len(times) else np.array([])
    for kernel in pd.unique(kernels):
        rows = np.flatnonzero(kernels == kernel)
        got, why = _kernel_answers(model, dataset.subset([kernel]))
        seconds[rows] = got
        for i, b in zip(rows, why):
            bottleneck[i] = b
    seconds[~(np.isfinite(seconds) & (seconds > 0))] = np.nan
    return seconds, bottleneck


#: Kernels whose answers from models that learn nothing are kept, at most.
MEMO_KERNELS = 4096
_MEMO: dict[tuple, tuple[np.ndarray, list[str]]] = {}


def _fingerprint(part: Dataset) -> str:
    digest = hashlib.sha1()
    for name, frame in part.tables().items():
        if len(frame):
            digest.update(name.encode())
            digest.update(",".join(map(str, frame.columns)).encode())
            digest.update(pd.util.hash_pandas_object(frame.astype(str), index=False)
                          .to_numpy().tobytes())
    return digest.hexdigest()


def _kernel_answers(model: Predictor, part: Dataset) -> tuple[np.ndarray, list[str]]:
    key = None
    if not model.learned:
        key = (model.name, json.dumps(model.get_params(deep=False), sort_keys=True, default=str),
               _fingerprint(part))
        if key in _MEMO:
            return _MEMO[key][0].copy(), list(_MEMO[key][1])
    try:
        got, why = _explained(model, part)
    except Exception:  # a base's failure on a kernel leaves its rows to the others
        got, why = np.full(len(part.times), np.nan), ["unknown"] * len(part.times)
    if key is not None:
        if len(_MEMO) >= MEMO_KERNELS:
            _MEMO.clear()
        _MEMO[key] = (np.asarray(got, dtype=float).copy(), list(why))
    return np.asarray(got, dtype=float), list(why)


def _kernel_groups(kernels: list[str], folds: int) -> list[list[str]]:
    names = sorted(set(kernels))
    count = max(2, min(int(folds), len(names)))
    return [names[i::count] for i in range(count) if names[i::count]]


def _fit_base(name: str, dataset: Dataset) -> Predictor | None:
    try:
        return get_predictor(name).fit(dataset)
    except Exception:  # a base that cannot learn from these kernels is left out
        return None


def _oof_column(name: str, train: Dataset, targets: Dataset, folds: int) -> np.ndarray:
    """One base's predictions of ``targets``' rows, none from a fit on the row's kernel."""
    column = np.full(len(targets.times), np.nan)
    kernels = targets.times["kernel"].to_numpy()
    if not predictor_class(name).learned:
        model = _fit_base(name, train)
        if model is not None:
            column = base_answers(model, _shown(targets))[0]
        return column
    for group in _kernel_groups(list(kernels), folds):
        model = _fit_base(name, train.subset([k for k in train.kernels() if k not in group]))
        rows = np.isin(kernels, group)
        if model is not None and rows.any():
            column[rows] = base_answers(model, _shown(targets.subset(group)))[0]
    return column


def out_of_fold(names: list[str], train: Dataset, folds: int) -> tuple[np.ndarray, Dataset]:
    """Log seconds of each base (columns) for each row with a measured time of ``train``,
    every one predicted by a base not fitted on that row's kernel; and those rows."""
    targets = _targets(train)
    z = np.column_stack([_oof_column(n, train, targets, folds) for n in names]) if names \
        else np.empty((len(targets.times), 0))
    return np.log(z), targets


# -- the experts ----------------------------------------------------------------------------

def simplex(p: int) -> np.ndarray:
    """Weights of ``p`` predictions: every non-negative combination summing to one on a
    grid of 1/20 (1/10 beyond three predictions), one per row."""
    steps = 20 if p <= 3 else 10
    grid = [c for c in itertools.product(range(steps + 1), repeat=p - 1) if sum(c) <= steps]
    return np.array([[*(k / steps for k in c), 1.0 - sum(c) / steps] for c in grid])


def _factor(r: np.ndarray, loss: str) -> np.ndarray:
    """The log factor that minimises the loss of each row of log ratios ``r`` (measured over
    blended): their median for ``log``; for ``mape`` their median weighted by
    blended / measured (``exp(-r)``), which minimises the mean absolute percentage error."""
    if loss == "log":
        return np.median(r, axis=1)
    order = np.sort(r, axis=1)
    weights = np.cumsum(np.exp(-order), axis=1)
    half = np.argmax(weights >= 0.5 * weights[:, -1:], axis=1)
    return order[np.arange(len(order)), half]


def _losses(errors: np.ndarray, loss: str) -> np.ndarray:
    """Mean loss of each row of log errors (predicted over measured)."""
    if loss == "log":
        return np.mean(np.abs(errors), axis=-1)
    return np.mean(np.abs(np.expm1(errors)), axis=-1)


def blend_fit(x: np.ndarray, y: np.ndarray, loss: str = "mape") -> np.ndarray:
    """The weighted geometric mean of the predictions ``exp(x)`` times a factor that fits
    the times ``exp(y)`` best under ``loss``: non-negative weights that sum to one (on the
    grid of :func:`simplex`), the factor exact for each. Returns ``[log factor, w_1, ...]``."""
    weights = simplex(x.shape[1])
    r = y[None, :] - weights @ x.T
    factor = _factor(r, loss)
    best = int(np.argmin(_losses(factor[:, None] - r, loss)))
    return np.concatenate([[factor[best]], weights[best]])


def _mape(log_predicted: np.ndarray, y: np.ndarray) -> float:
    return float(100.0 * _losses(log_predicted - y, "mape"))


@dataclass(frozen=True)
class Plan:
    """How experts are fitted: folds by kernel for their held-out error, most terms of a
    blend, and the loss (``mape`` or ``log``) of the fits and of the held-out error."""

    folds: int = 4
    max_terms: int = 3
    loss: str = "mape"

    def error(self, log_predicted: np.ndarray, y: np.ndarray) -> float:
        """The loss in percent (``mape``) or in mean absolute log error (``log``)."""
        scale = 100.0 if self.loss == "mape" else 1.0
        return float(scale * _losses(log_predicted - y, self.loss))


def _held_out_error(x: np.ndarray, y: np.ndarray, groups: np.ndarray, plan: Plan) -> float:
    """The error of :func:`blend_fit` on ``x``, each kernel group predicted by a fit
    without it."""
    out = np.empty(len(y))
    for group in _kernel_groups(list(groups), plan.folds):
        test = np.isin(groups, group)
        beta = blend_fit(x[~test], y[~test], plan.loss)
        out[test] = beta[0] + x[test] @ beta[1:]
    return plan.error(out, y)


def forward_select(x: np.ndarray, y: np.ndarray, groups: np.ndarray, plan: Plan
                   ) -> tuple[list[int], float]:
    """Columns of ``x`` chosen one at a time by the held-out error they leave (the first
    one always; a later one only if it lowers the error by ``_TOL``), and that error."""
    chosen: list[int] = []
    best = math.inf
    while len(chosen) < min(plan.max_terms, x.shape[1]):
        trials = {j: _held_out_error(x[:, chosen + [j]], y, groups, plan)
                  for j in range(x.shape[1]) if j not in chosen}
        j, error = min(trials.items(), key=lambda item: (item[1], item[0]))
        if chosen and error > best * (1.0 - _TOL):
            break
        chosen.append(j)
        best = error
    return chosen, best


def row_features(times: pd.DataFrame) -> np.ndarray:
    """The launch of each row: log2 of its blocks, threads per block and SM count, and its
    size (0 small, 1 medium, 2 large); -1 where unknown."""
    def column(name: str) -> np.ndarray:
        if name not in times:
            return np.full(len(times), np.nan)
        return pd.to_numeric(times[name], errors="coerce").to_numpy(dtype=float)

    logs = [np.log2(np.clip(column(c), 1.0, None)) for c in ("blocks", "threads_per_block",
                                                            "sm_count")]
    size = (times["size"].map(SIZES).to_numpy(dtype=float) if "size" in times
            else np.full(len(times), np.nan))
    out = np.column_stack([*logs, size]) if len(times) else np.empty((0, 4))
    out[~np.isfinite(out)] = -1.0
    return out


def _selector_fit(x: np.ndarray, f: np.ndarray, y: np.ndarray) -> Any:
    """A shallow tree that picks, from the launch and the bases' predictions, the base
    closest to the measured time."""
    from sklearn.tree import DecisionTreeClassifier  # noqa: PLC0415 (on use: scikit-learn)

    tree = DecisionTreeClassifier(max_depth=_SELECTOR_DEPTH, random_state=0,
                                  min_samples_leaf=max(3, len(y) // 20))
    return tree.fit(np.column_stack([f, x]), np.argmin(np.abs(x - y[:, None]), axis=1))


def _selected(tree: Any, x: np.ndarray, f: np.ndarray) -> np.ndarray:
    return np.asarray(tree.predict(np.column_stack([f, x])), dtype=int)


def _selector_error(x: np.ndarray, f: np.ndarray, y: np.ndarray, groups: np.ndarray,
                    plan: Plan) -> float:
    """The error of the selector, each kernel group predicted by a tree grown without it."""
    out = np.empty(len(y))
    for group in _kernel_groups(list(groups), plan.folds):
        test = np.isin(groups, group)
        pick = _selected(_selector_fit(x[~test], f[~test], y[~test]), x[test], f[test])
        out[test] = x[test][np.arange(int(test.sum())), pick]
    return plan.error(out, y)


def _expert(x: np.ndarray, f: np.ndarray, y: np.ndarray, groups: np.ndarray, names: list[str],
            plan: Plan) -> dict[str, Any]:
    """The blend of the pattern's bases, or the selector where it does better held out."""
    terms, error = forward_select(x, y, groups, plan)
    beta = blend_fit(x[:, terms], y, plan.loss)
    expert = {"kind": "blend", "pattern": names, "terms": [names[t] for t in terms],
              "intercept": float(beta[0]), "weights": [float(w) for w in beta[1:]],
              "held_out_error": error, "rows": len(y), "kernels": len(set(groups))}
    if len(names) > 1:
        chosen = _selector_error(x, f, y, groups, plan)
        if chosen < error * (1.0 - _SELECT_MARGIN):
            expert.update(kind="select", terms=list(names), intercept=0.0, weights=[],
                          held_out_error=chosen, selector=_selector_fit(x, f, y))
    return expert


def fit_experts(z: np.ndarray, y: np.ndarray, groups: np.ndarray, names: list[str],
                plan: Plan, features: np.ndarray | None = None) -> list[dict[str, Any]]:
    """One expert per answer pattern seen on at least :data:`MIN_KERNELS` kernels (the
    rows of ``features`` are the launches, :func:`row_features`)."""
    answered = np.isfinite(z)
    f = np.zeros((len(y), 0)) if features is None else features
    experts = []
    for pattern in sorted({tuple(bool(v) for v in row) for row in answered}, reverse=True):
        cols = [j for j, on in enumerate(pattern) if on]
        rows = answered[:, cols].all(axis=1) if cols else np.zeros(len(y), bool)
        if not cols or len(set(groups[rows])) < MIN_KERNELS:
            continue
        experts.append(_expert(z[rows][:, cols], f[rows], y[rows], groups[rows],
                               [names[j] for j in cols], plan))
    return experts


def _apply(expert: dict[str, Any], z: dict[str, np.ndarray], f: np.ndarray
           ) -> tuple[np.ndarray, list[dict[str, float]]]:
    """Log seconds of an expert for rows whose log base predictions are ``z`` (name ->
    column) and launches ``f``, and each row's weights of the bases."""
    if expert["kind"] == "select":
        x = np.column_stack([z[n] for n in expert["pattern"]])
        pick = _selected(expert["selector"], x, f)
        return (x[np.arange(len(pick)), pick],
                [{expert["pattern"][j]: 1.0} for j in pick])
    weights = dict(zip(expert["terms"], expert["weights"]))
    logs = expert["intercept"] + sum(w * z[n] for n, w in weights.items())
    return np.asarray(logs, dtype=float), [weights] * len(f)


def _choose(experts: list[dict[str, Any]], answered: set[str]) -> dict[str, Any] | None:
    """The expert of the largest answer pattern within ``answered`` (ties: the lower
    held-out error); None if there is none."""
    fits = [e for e in experts if set(e["pattern"]) <= answered]
    if not fits:
        return None
    return min(fits, key=lambda e: (-len(e["pattern"]), e["held_out_error"]))


# -- the model ------------------------------------------------------------------------------

@register
class Combined(Predictor):
    """A stack of registered models: per answer pattern, a weighted geometric mean of the
    bases that answered, or a choice among them (see the module docstring).

    Parameters
    ----------
    bases
        Names of the registered models to combine; None: :func:`default_bases`.
    inner_folds
        Folds by kernel inside the training kernels, for the bases' out-of-fold
        predictions and the choice of terms.
    max_terms
        Most bases one blend combines.
    loss
        ``mape`` or ``log``: what the blends and the held-out errors minimise.
    """

    name = "combined"
    needs = frozenset({"spec"})
    description = ("a stack of the registered models: per answer pattern, a weighted geometric "
                   "mean of the bases that answered (or a choice among them), chosen by error "
                   "on held-out training kernels")
    insight = ("ETP; which models each prediction rests on, with their weights, and the "
               "bottleneck named by the most weighted of them")
    learned = True
    columns = ("kernel", "language", "size", "config", "tunables", "device", "sm_count",
               "blocks", "threads_per_block")

    def __init__(self, *, bases: tuple[str, ...] | None = None, inner_folds: int = 4,
                 max_terms: int = 3, loss: str = "mape"):
        self.bases = bases
        self.inner_folds = inner_folds
        self.max_terms = max_terms
        self.loss = loss

    def _names(self) -> list[str]:
        names = default_bases() if self.bases is None else [str(b).strip() for b in self.bases]
        for name in names:
            predictor_class(name)  # an unknown name fails here, listing the known ones
        if "combined" in names:
            raise InputError("combined cannot be one of its own bases; remove it from bases")
        if self.loss not in ("mape", "log"):
            raise InputError(f"loss must be 'mape' or 'log', not {self.loss!r}")
        return names

    def _fit(self, dataset: Dataset) -> None:
        names = self._names()
        kernels = set(_targets(dataset).times["kernel"])
        if len(kernels) < MIN_KERNELS:
            raise InputError(f"combined needs measured times of at least {MIN_KERNELS} training "
                             f"kernels to weigh its bases, got {len(kernels)}; train on more "
                             "kernels")
        z, targets = out_of_fold(names, dataset, self.inner_folds)
        y = np.log(targets.times[TARGET].to_numpy(dtype=float))
        groups = targets.times["kernel"].to_numpy()
        plan = Plan(folds=self.inner_folds, max_terms=self.max_terms, loss=self.loss)
        experts = fit_experts(z, y, groups, names, plan, features=row_features(targets.times))
        used = sorted({b for e in experts for b in e["pattern"]})
        fitted = {n: _fit_base(n, dataset) for n in used}
        self._live = {n: m for n, m in fitted.items() if m is not None}
        self.experts_ = [e for e in experts if set(e["pattern"]) <= set(self._live)]
        if not self.experts_:
            raise InputError(f"none of the bases ({', '.join(names)}) answered the launches of "
                             f"{MIN_KERNELS} training kernels; give bases whose needs the "
                             "dataset meets")
        self.bases_ = names
        self.base_states_ = {n: json.dumps(m.to_dict()) for n, m in self._live.items()}
        self.held_out_mape_ = {n: _column_mape(z[:, j], y) for j, n in enumerate(names)}
        self.n_train_ = len(y)

    def _models(self) -> dict[str, Predictor]:
        live = getattr(self, "_live", None)
        if live is None or set(live) != set(self.base_states_):
            live = {n: Predictor.from_dict(json.loads(s)) for n, s in self.base_states_.items()}
            self._live = live
        return live

    def _answer(self, dataset: Dataset) -> list[Prediction]:
        answers = {n: base_answers(m, dataset) for n, m in self._models().items()}
        z = {n: np.log(a[0]) for n, a in answers.items()}
        count = len(dataset.times)
        chosen = [_choose(self.experts_, {n for n in z if np.isfinite(z[n][i])})
                  for i in range(count)]
        logs = np.full(count, np.nan)
        weights: list[dict[str, float]] = [{}] * count
        features = row_features(dataset.times)
        for expert in self.experts_:
            rows = [i for i in range(count) if chosen[i] is expert]
            if rows:
                got, used = _apply(expert, {n: v[rows] for n, v in z.items()}, features[rows])
                logs[rows] = got
                for i, w in zip(rows, used):
                    weights[i] = w
        return [self._prediction(float(np.exp(logs[i])), chosen[i], weights[i], answers, i)
                for i in range(count)]

    def _prediction(self, seconds: float, expert: dict[str, Any] | None,
                    weights: dict[str, float], answers: dict[str, tuple[np.ndarray, list[str]]],
                    i: int) -> Prediction:
        bases = {n: float(a[0][i]) for n, a in answers.items() if np.isfinite(a[0][i])}
        if expert is None:
            return Prediction(float("nan"), self.name, based_on={
                "error": "no base with an expert answered this launch", "bases": bases})
        return Prediction(seconds, self.name, bottleneck=_bottleneck(weights, answers, i),
                          based_on={"bases": bases, "weights": weights, "how": expert["kind"],
                                    "intercept": expert["intercept"],
                                    "pattern": expert["pattern"],
                                    "expert_held_out_error": expert["held_out_error"]})

    def _predict(self, dataset: Dataset) -> np.ndarray:
        return np.array([p.seconds for p in self._answer(dataset)], dtype=float)

    def explain(self, dataset: Dataset) -> list[Prediction]:
        """Each row's time with the bases it rests on, their weights and the bottleneck."""
        self._check_fitted()
        return self._answer(dataset)

    def explain_launch(self, kernel: Any, launch: Any, inputs: LaunchInputs) -> Prediction:
        """Not possible: the bases' answers come from a measured dataset's rows."""
        raise InputError("the model 'combined' weighs other models' predictions of a measured "
                         "dataset's rows, not one launch; score it with 'kerncast evaluate "
                         "--models combined', or predict one launch with --model static or "
                         "sampling")


def _column_mape(column: np.ndarray, y: np.ndarray) -> float:
    answered = np.isfinite(column)
    return _mape(column[answered], y[answered]) if answered.any() else float("nan")


def _bottleneck(weights: dict[str, float], answers: dict[str, tuple[np.ndarray, list[str]]],
                i: int) -> str:
    for name in sorted(weights, key=lambda n: -abs(weights[n])):
        named = answers[name][1][i]
        if named and named != "unknown":
            return named
    return "unknown"

"""kerncast's speedup model, beyond the seed: a log response, regularised interactions or
gradient boosting, chosen by grouped cross-validation inside the training data; and a
port/no-port classifier.

The seed's model fits the speedup itself on 4 features; speedups here span five orders
of magnitude, so kerncast models ``log(speedup)`` and keeps every feature, with ridge
shrinkage instead of a subset search. Long-tailed features are used as logs, and the log
prediction is kept within the range of the training speedups. The point prediction is
``exp(E[log speedup])``, as likely to be under as over; the interval is the spread of
the out-of-fold residuals of the training kernels.

The relative error that the seed scores punishes over-prediction without bound but
under-prediction by at most 100%: when the predictions are uncertain it is minimised by
predicting low (for log-normal residuals of spread s, ``exp(E[log] - s**2)``), and when
they are uncertain enough, by predicting nothing at all. ``point="relative"`` shifts the
prediction by the factor that minimises the weighted error of the out-of-fold training
predictions, for scoring by that metric; it is not a better guess of the speedup.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GroupKFold
from threadpoolctl import threadpool_limits

from kerncast._errors import InputError, NotFittedError
from kerncast.cpu._features import FEATURES
from kerncast.cpu._xapp_data import feature_matrix, kernel_groups, speedup_column
from kerncast.cpu._xapp_metrics import PAPER_BOUNDS, PAPER_WEIGHTS, weighted_error

__all__ = ["CANDIDATES", "KerncastModel", "PortClassifier", "grouped_folds"]

CANDIDATES: tuple[str, ...] = ("ridge", "ridge-pairs", "gbm")
"""``ridge``: log speedup linear in the features; ``ridge-pairs``: plus every pairwise
product and square; ``gbm``: gradient-boosted trees on log speedup."""
LOG_RATIO = 100.0
"""A feature positive over the training rows whose largest value exceeds its smallest by
this factor is used as its log (memInt, pages and coldRef span five orders of magnitude,
ILP two or three); so are the extra columns a model is given (counts such as ``ops``)."""
ALPHAS: np.ndarray = np.logspace(-2, 4, 13)
_KIND = "kerncast-speedup"
_FORMAT = 2
"""The layout of :meth:`KerncastModel.to_dict`; data of another layout must be refitted."""
_SHIFTS = np.linspace(-3.0, 1.0, 401)


def grouped_folds(groups: Sequence[str] | np.ndarray, n_folds: int = 5,
                  seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(train, test)`` index pairs of a K-fold split by kernel, shuffled with ``seed``."""
    g = np.asarray(groups)
    labels = np.unique(g)
    if labels.size < 2:
        raise InputError("a split by kernel needs at least 2 kernels")
    folds = min(n_folds, labels.size)
    splitter = GroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    return [(tr, te) for tr, te in splitter.split(np.zeros(g.size), groups=g)]


@dataclass(frozen=True)
class _Prep:
    """Feature preprocessing fitted on training data: the log of the long-tailed columns
    (those whose ``floor`` is not NaN; values are first raised to the floor, the training
    minimum), then z-scores; ``pairs`` adds every product ``z_i * z_j`` (i <= j)."""

    floor: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    pairs: bool
    features: tuple[str, ...] = FEATURES

    @classmethod
    def fit(cls, x: np.ndarray, pairs: bool, features: tuple[str, ...] = FEATURES) -> _Prep:
        low, high = x.min(axis=0), x.max(axis=0)
        extra = np.array([f not in FEATURES for f in features])
        logged = (low > 0) & ((high > LOG_RATIO * low) | extra)
        floor = np.where(logged, low, np.nan)
        base = cls._base(x, floor)
        std = base.std(axis=0)
        return cls(floor, base.mean(axis=0), np.where(std > 0, std, 1.0), pairs, tuple(features))

    @staticmethod
    def _base(x: np.ndarray, floor: np.ndarray) -> np.ndarray:
        out = np.array(x, dtype=float)
        mask = ~np.isnan(floor)
        out[:, mask] = np.log(np.maximum(out[:, mask], floor[mask]))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"floor": [None if np.isnan(v) else float(v) for v in self.floor],
                "mean": self.mean.tolist(), "scale": self.scale.tolist(), "pairs": self.pairs,
                "features": list(self.features)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> _Prep:
        return cls(np.array([np.nan if v is None else v for v in data["floor"]], dtype=float),
                   np.asarray(data["mean"], dtype=float), np.asarray(data["scale"], dtype=float),
                   bool(data["pairs"]), tuple(data["features"]))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        z = (self._base(x, self.floor) - self.mean) / self.scale
        if not self.pairs:
            return z
        i, j = np.triu_indices(z.shape[1])
        return np.hstack([z, z[:, i] * z[:, j]])

    def names(self) -> list[str]:
        names = self.features
        if not self.pairs:
            return list(names)
        i, j = np.triu_indices(len(names))
        return [*names, *(f"{names[a]}*{names[b]}" for a, b in zip(i, j))]


def _fit_ridge(z: np.ndarray, t: np.ndarray, groups: np.ndarray, n_folds: int,
               seed: int) -> Ridge:
    """Ridge with the penalty chosen by a K-fold split by kernel of the data it is given."""
    folds = grouped_folds(groups, n_folds, seed)
    errors = np.zeros(len(ALPHAS))
    for tr, te in folds:
        for a, alpha in enumerate(ALPHAS):
            fitted = Ridge(alpha=alpha).fit(z[tr], t[tr])
            errors[a] += np.sum((fitted.predict(z[te]) - t[te]) ** 2)
    return Ridge(alpha=float(ALPHAS[int(np.argmin(errors))])).fit(z, t)


def _packed(values: np.ndarray, dtype: str) -> str:
    return base64.b64encode(np.ascontiguousarray(values, dtype=dtype).tobytes()).decode("ascii")


def _unpacked(text: str, dtype: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=dtype).copy()


_TREE_FIELDS = {"feature": "<i4", "threshold": "<f8", "left": "<i4", "right": "<i4",
                "leaf": "|b1", "value": "<f8", "roots": "<i4"}


@dataclass(frozen=True)
class _Trees:
    """Boosted regression trees as flat node arrays, taken from a fitted
    ``HistGradientBoostingRegressor``: a row goes left where ``x[feature] <= threshold``;
    the prediction is ``baseline`` plus the leaf values of every tree. Small to save and
    exact to load (no pickle); features never hold NaN here (:func:`feature_matrix`)."""

    baseline: float
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf: np.ndarray
    value: np.ndarray
    roots: np.ndarray

    @classmethod
    def of(cls, fitted: HistGradientBoostingRegressor) -> _Trees:
        nodes = [tree[0].nodes for tree in fitted._predictors]
        if any(n["is_categorical"].any() for n in nodes):
            raise InputError("categorical splits are not supported")
        starts = np.cumsum([0, *(len(n) for n in nodes[:-1])])
        every = np.concatenate(nodes)
        offset = np.repeat(starts, [len(n) for n in nodes])
        return cls(float(np.ravel(fitted._baseline_prediction)[0]),
                   every["feature_idx"].astype(np.int32), every["num_threshold"].astype(float),
                   (every["left"] + offset).astype(np.int32), (every["right"] + offset).astype(np.int32),
                   every["is_leaf"].astype(bool), every["value"].astype(float), starts.astype(np.int32))

    def predict(self, x: np.ndarray) -> np.ndarray:
        node = np.repeat(self.roots[:, None], x.shape[0], axis=1)  # (trees, rows)
        rows = np.arange(x.shape[0])[None, :]
        while not self.leaf[node].all():
            left = x[rows, self.feature[node]] <= self.threshold[node]
            node = np.where(self.leaf[node], node, np.where(left, self.left[node], self.right[node]))
        return self.baseline + self.value[node].sum(axis=0)

    def to_dict(self) -> dict[str, Any]:
        return {"baseline": self.baseline,
                **{name: _packed(getattr(self, name), dtype) for name, dtype in _TREE_FIELDS.items()}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> _Trees:
        return cls(float(data["baseline"]),
                   **{name: _unpacked(data[name], dtype) for name, dtype in _TREE_FIELDS.items()})


def _gbm(seed: int) -> HistGradientBoostingRegressor:
    return HistGradientBoostingRegressor(max_iter=300, learning_rate=0.05, max_depth=3,
                                         min_samples_leaf=5, l2_regularization=1.0,
                                         early_stopping=False, random_state=seed)


@dataclass
class _Fitted:
    """One candidate fitted on some rows: predicts log speedup."""

    candidate: str
    prep: _Prep | None = None
    coef: np.ndarray | None = None
    intercept: float = 0.0
    alpha: float = float("nan")
    trees: _Trees | None = None

    def predict_log(self, x: np.ndarray) -> np.ndarray:
        if self.trees is not None:
            return self.trees.predict(x)
        assert self.prep is not None and self.coef is not None
        return self.prep(x) @ self.coef + self.intercept


def _fit_candidate(candidate: str, x: np.ndarray, t: np.ndarray, groups: np.ndarray,
                   n_folds: int, seed: int, features: tuple[str, ...] = FEATURES) -> _Fitted:
    if candidate == "gbm":
        # one thread: on a few hundred rows OpenMP's start-up and barriers cost more than
        # they save, and far more on a busy machine
        with threadpool_limits(1, user_api="openmp"):
            return _Fitted(candidate, trees=_Trees.of(_gbm(seed).fit(x, t)))
    prep = _Prep.fit(x, candidate == "ridge-pairs", features)
    ridge = _fit_ridge(prep(x), t, groups, n_folds, seed)
    return _Fitted(candidate, prep, np.asarray(ridge.coef_, dtype=float),
                   float(ridge.intercept_), float(ridge.alpha))


def _best_shift(log_pred: np.ndarray, y: np.ndarray, bounds: Sequence[float],
                weights: Sequence[float]) -> tuple[float, float]:
    """The shift of the log predictions that minimises the weighted error, and that error."""
    errors = [weighted_error(y, np.exp(log_pred + s), bounds, weights) for s in _SHIFTS]
    best = int(np.argmin(errors))
    return float(_SHIFTS[best]), float(errors[best])


@dataclass
class KerncastModel:
    """kerncast's speedup model for one platform.

    ``fit`` runs a K-fold split by kernel (``n_folds``) of the training rows; every
    candidate of ``candidates`` predicts the held-out kernels of each fold. With ``point``
    ``median`` the candidate with the lowest mean ``|log error|`` of those out-of-fold
    predictions is kept; with ``relative`` the one with the lowest weighted error
    (``bounds``, ``weights``) after its best shift. The chosen candidate is then fitted on
    all the rows; its out-of-fold log residuals give the interval. ``scores_`` holds each
    candidate's out-of-fold weighted error of what :meth:`predict` returns, ``log_errors_``
    its mean ``|log error|``.

    ``extra`` names further columns of the rows to use besides the 39 features (counts,
    used as logs), e.g. the profiler's ``ops``; they must be there at prediction too.
    """

    candidates: tuple[str, ...] = CANDIDATES
    n_folds: int = 5
    bounds: tuple[float, float] = PAPER_BOUNDS
    weights: tuple[float, float, float] = PAPER_WEIGHTS
    seed: int = 0
    extra: tuple[str, ...] = ()
    point: str = "median"
    candidate_: str = ""
    fitted_: _Fitted | None = None
    shift_: float = 0.0
    residuals_: np.ndarray | None = None
    medians_: np.ndarray | None = None
    log_range_: tuple[float, float] = (-np.inf, np.inf)
    scores_: dict[str, float] = field(default_factory=dict)
    log_errors_: dict[str, float] = field(default_factory=dict)
    oof_log_: np.ndarray | None = None
    build_seconds_: float = float("nan")

    def _check(self) -> None:
        bad = [c for c in self.candidates if c not in CANDIDATES]
        if bad or not self.candidates:
            raise InputError(f"unknown candidate {', '.join(bad) or '(none)'}; use some of "
                             f"{', '.join(CANDIDATES)}")
        if self.point not in ("median", "relative"):
            raise InputError(f"unknown point {self.point!r}; use median or relative")

    def fit(self, frame: pd.DataFrame) -> KerncastModel:
        """Choose the candidate by grouped cross-validation on ``frame`` and fit it."""
        started = time.perf_counter()
        self._check()
        names = self.features
        x, y, groups = feature_matrix(frame, names), speedup_column(frame), kernel_groups(frame)
        t = np.log(y)
        folds = grouped_folds(groups, self.n_folds, self.seed)
        oof: dict[str, np.ndarray] = {}
        shifts: dict[str, float] = {}
        for cand in self.candidates:
            pred = np.empty_like(t)
            for tr, te in folds:
                inner = _fit_candidate(cand, x[tr], t[tr], groups[tr], self.n_folds, self.seed,
                                       names)
                pred[te] = np.clip(inner.predict_log(x[te]), t[tr].min(), t[tr].max())
            oof[cand] = pred
            shifts[cand], shifted = _best_shift(pred, y, self.bounds, self.weights)
            self.log_errors_[cand] = float(np.mean(np.abs(pred - t)))
            self.scores_[cand] = (shifted if self.point == "relative" else
                                  weighted_error(y, np.exp(pred), self.bounds, self.weights))
        key = self.scores_ if self.point == "relative" else self.log_errors_
        self.candidate_ = min(self.candidates, key=lambda c: key[c])
        self.shift_ = shifts[self.candidate_]
        self.oof_log_ = oof[self.candidate_]
        self.residuals_ = np.sort(t - (self.oof_log_ + self._offset()))
        self.medians_ = np.median(x, axis=0)
        self.log_range_ = (float(t.min()), float(t.max()))
        self.fitted_ = _fit_candidate(self.candidate_, x, t, groups, self.n_folds, self.seed,
                                      names)
        self.build_seconds_ = time.perf_counter() - started
        return self

    @property
    def features(self) -> tuple[str, ...]:
        """The columns the model reads: the 39 features, then ``extra``."""
        return (*FEATURES, *self.extra)

    def _log_median(self, frame: pd.DataFrame) -> np.ndarray:
        if self.fitted_ is None:
            raise NotFittedError("the kerncast speedup model is not fitted; call fit() or "
                                 "from_dict() first")
        return np.clip(self.fitted_.predict_log(feature_matrix(frame, self.features)),
                       *self.log_range_)

    def _offset(self) -> float:
        return self.shift_ if self.point == "relative" else 0.0

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """The point prediction of every row's speedup (see ``point``)."""
        return np.exp(self._log_median(frame) + self._offset())

    def predict_median(self, frame: pd.DataFrame) -> np.ndarray:
        """The prediction ``exp(E[log speedup])``: even odds above and below."""
        return np.exp(self._log_median(frame))

    def predict_relative(self, frame: pd.DataFrame) -> np.ndarray:
        """The prediction shifted to minimise the weighted relative error (``shift_``)."""
        return np.exp(self._log_median(frame) + self.shift_)

    def predict_interval(self, frame: pd.DataFrame,
                         level: float = 0.8) -> tuple[np.ndarray, np.ndarray]:
        """The ``level`` interval of every row's speedup, from the quantiles of the
        out-of-fold log residuals of the training data."""
        if not 0 < level < 1:
            raise InputError(f"the interval level must be between 0 and 1, got {level}")
        if self.residuals_ is None:
            raise NotFittedError("the kerncast speedup model is not fitted")
        lo, hi = np.quantile(self.residuals_, [(1 - level) / 2, (1 + level) / 2])
        center = self._log_median(frame) + self._offset()
        return np.exp(center + lo), np.exp(center + hi)

    def explain(self, row: pd.Series | pd.DataFrame, top: int = 8) -> dict[str, Any]:
        """The terms that drove a prediction, largest first, in log-speedup units
        (``factor`` = ``exp(contribution)`` multiplies the speedup).

        Linear candidates: coefficient times the term's z-scored value. Trees: the change
        of the log prediction when the feature is set to its training median instead.
        """
        frame = row.to_frame().T if isinstance(row, pd.Series) else row.iloc[:1]
        names = self.features
        x = feature_matrix(frame, names)
        base = self._log_median(frame)
        assert self.fitted_ is not None and self.medians_ is not None
        terms: list[dict[str, Any]] = []
        if self.fitted_.trees is None:
            assert self.fitted_.prep is not None and self.fitted_.coef is not None
            z = self.fitted_.prep(x)[0]
            contrib = self.fitted_.coef * z
            term_names = self.fitted_.prep.names()
            for i in np.argsort(-np.abs(contrib), kind="stable")[:top]:
                terms.append({"term": term_names[i], "coefficient": float(self.fitted_.coef[i]),
                              "value": float(z[i]), "contribution": float(contrib[i]),
                              "factor": float(np.exp(contrib[i]))})
        else:
            swapped = np.repeat(x, len(names), axis=0)
            swapped[np.arange(len(names)), np.arange(len(names))] = self.medians_
            contrib = base[0] - np.clip(self.fitted_.predict_log(swapped), *self.log_range_)
            for i in np.argsort(-np.abs(contrib), kind="stable")[:top]:
                terms.append({"term": names[i], "value": float(x[0, i]),
                              "median": float(self.medians_[i]),
                              "contribution": float(contrib[i]), "factor": float(np.exp(contrib[i]))})
        low, high = self.predict_interval(frame)
        return {
            "model": _KIND, "candidate": self.candidate_,
            "prediction": float(np.exp(base[0] + self._offset())), "point": self.point,
            "interval": [float(low[0]), float(high[0])],
            "intercept": float(self.fitted_.intercept), "shift": self._offset(),
            "features": {f: float(v) for f, v in zip(names, x[0])},
            "terms": terms,
        }

    def to_dict(self) -> dict[str, Any]:
        """The fitted model as JSON-ready data (:meth:`from_dict` reads it back)."""
        if self.fitted_ is None or self.residuals_ is None or self.medians_ is None:
            raise NotFittedError("the kerncast speedup model is not fitted; nothing to save")
        f = self.fitted_
        data: dict[str, Any] = {
            "kind": _KIND, "format": _FORMAT, "candidate": self.candidate_, "shift": self.shift_,
            "residuals": self.residuals_.tolist(), "medians": self.medians_.tolist(),
            "scores": dict(self.scores_), "log_errors": dict(self.log_errors_),
            "build_seconds": self.build_seconds_,
            "log_range": list(self.log_range_), "features": list(self.features),
            "params": {"candidates": list(self.candidates), "n_folds": self.n_folds,
                       "bounds": list(self.bounds), "weights": list(self.weights),
                       "seed": self.seed, "extra": list(self.extra), "point": self.point},
        }
        if f.trees is not None:
            data["trees"] = f.trees.to_dict()
        else:
            assert f.prep is not None and f.coef is not None
            data.update(coef=f.coef.tolist(), intercept=f.intercept, alpha=f.alpha,
                        prep=f.prep.to_dict())
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> KerncastModel:
        """A fitted model from :meth:`to_dict`'s data."""
        if not isinstance(data, dict) or data.get("kind") != _KIND:
            raise InputError(f"not a saved kerncast speedup model (kind {_KIND!r} expected)")
        if data.get("format") != _FORMAT:
            raise InputError(f"this speedup model was saved in format {data.get('format', 1)}, "
                             f"this kerncast reads format {_FORMAT}; fit it again (e.g. "
                             "kerncast train xapp --dataset data/h100)")
        p = data["params"]
        model = cls(tuple(p["candidates"]), int(p["n_folds"]), tuple(p["bounds"]),
                    tuple(p["weights"]), int(p["seed"]), tuple(p["extra"]), p["point"])
        model._check()
        if list(data["features"]) != list(model.features):
            raise InputError("the saved model was fitted on another feature list than "
                             "kerncast.cpu._features.FEATURES; fit it again")
        model.candidate_ = data["candidate"]
        model.shift_ = float(data["shift"])
        model.residuals_ = np.asarray(data["residuals"], dtype=float)
        model.medians_ = np.asarray(data["medians"], dtype=float)
        low, high = data["log_range"]
        model.log_range_ = (float(low), float(high))
        model.scores_ = {str(k): float(v) for k, v in data["scores"].items()}
        model.log_errors_ = {str(k): float(v) for k, v in data["log_errors"].items()}
        model.build_seconds_ = float(data["build_seconds"])
        if "trees" in data:
            model.fitted_ = _Fitted(model.candidate_, trees=_Trees.from_dict(data["trees"]))
        else:
            prep = _Prep.from_dict(data["prep"])
            model.fitted_ = _Fitted(model.candidate_, prep, np.asarray(data["coef"], dtype=float),
                                    float(data["intercept"]), float(data["alpha"]))
        return model


@dataclass
class PortClassifier:
    """Is a region worth porting: will its speedup exceed ``threshold``?

    ``method`` ``logistic`` is a logistic regression on the z-scored features (the log of
    the long-tailed ones); ``regression`` says yes when a :class:`KerncastModel`'s median
    prediction exceeds the threshold; ``majority`` always gives the training rows' more
    common answer; ``auto`` keeps the most accurate of the three on the held-out kernels
    of a K-fold split by kernel of the training rows (``majority`` on a tie: the others
    must earn their place). With one class only in the training rows the logistic model
    answers that class.
    """

    threshold: float = 1.0
    method: str = "auto"
    n_folds: int = 5
    seed: int = 0
    method_: str = ""
    regression_: KerncastModel | None = None
    prep_: _Prep | None = None
    coef_: np.ndarray | None = None
    intercept_: float = 0.0
    constant_: bool | None = None
    scores_: dict[str, float] = field(default_factory=dict)

    def _fit_logistic(self, x: np.ndarray, labels: np.ndarray) -> None:
        self.prep_ = _Prep.fit(x, pairs=False)
        if labels.min() == labels.max():
            self.constant_, self.coef_ = bool(labels[0]), np.zeros(x.shape[1])
            return
        fitted = LogisticRegression(C=1.0, max_iter=2000).fit(self.prep_(x), labels)
        self.constant_ = None
        self.coef_ = np.asarray(fitted.coef_[0], dtype=float)
        self.intercept_ = float(fitted.intercept_[0])

    def _fit_majority(self, x: np.ndarray, labels: np.ndarray) -> None:
        self.prep_ = _Prep.fit(x, pairs=False)
        self.constant_, self.coef_ = bool(labels.mean() >= 0.5), np.zeros(x.shape[1])

    def _logistic_says(self, x: np.ndarray) -> np.ndarray:
        if self.constant_ is not None:
            return np.full(x.shape[0], self.constant_)
        assert self.prep_ is not None and self.coef_ is not None
        return self.prep_(x) @ self.coef_ + self.intercept_ > 0

    def fit(self, frame: pd.DataFrame, regression: KerncastModel | None = None) -> PortClassifier:
        """Fit on ``frame``; ``regression`` is a fitted :class:`KerncastModel` of the same
        rows (fitted here when needed and not given)."""
        if self.method not in ("auto", "logistic", "regression", "majority"):
            raise InputError(f"unknown method {self.method!r}; use auto, logistic, regression "
                             "or majority")
        if not self.threshold > 0:
            raise InputError(f"the speedup threshold must be positive, got {self.threshold}")
        x, y, groups = feature_matrix(frame), speedup_column(frame), kernel_groups(frame)
        labels = y > self.threshold
        if self.method in ("auto", "regression") and regression is None:
            regression = KerncastModel(n_folds=self.n_folds, seed=self.seed).fit(frame)
        self.regression_ = regression
        if self.method == "auto":
            assert regression is not None and regression.oof_log_ is not None
            said, common = np.empty_like(labels), np.empty_like(labels)
            for tr, te in grouped_folds(groups, self.n_folds, self.seed):
                self._fit_logistic(x[tr], labels[tr])
                said[te] = self._logistic_says(x[te])
                common[te] = labels[tr].mean() >= 0.5
            self.scores_ = {"majority": float(np.mean(common == labels)),
                            "regression": float(np.mean(
                                (np.exp(regression.oof_log_) > self.threshold) == labels)),
                            "logistic": float(np.mean(said == labels))}
            self.method_ = max(self.scores_, key=lambda m: self.scores_[m])
        else:
            self.method_ = self.method
        if self.method_ == "logistic":
            self._fit_logistic(x, labels)
        elif self.method_ == "majority":
            self._fit_majority(x, labels)
        return self

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """``True`` where the speedup is predicted above the threshold."""
        if not self.method_:
            raise NotFittedError("the port classifier is not fitted; call fit() first")
        if self.method_ == "regression":
            assert self.regression_ is not None
            return self.regression_.predict_median(frame) > self.threshold
        return self._logistic_says(feature_matrix(frame))

    def to_dict(self) -> dict[str, Any]:
        """The fitted classifier as JSON-ready data."""
        if not self.method_:
            raise NotFittedError("the port classifier is not fitted; nothing to save")
        data: dict[str, Any] = {"kind": "kerncast-port", "threshold": self.threshold,
                                "method": self.method, "method_": self.method_,
                                "n_folds": self.n_folds, "seed": self.seed,
                                "scores": dict(self.scores_)}
        if self.method_ == "regression":
            assert self.regression_ is not None
            data["regression"] = self.regression_.to_dict()
        else:
            assert self.prep_ is not None and self.coef_ is not None
            data.update(coef=self.coef_.tolist(), intercept=self.intercept_,
                        constant=self.constant_, prep=self.prep_.to_dict())
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PortClassifier:
        """A fitted classifier from :meth:`to_dict`'s data."""
        if not isinstance(data, dict) or data.get("kind") != "kerncast-port":
            raise InputError("not a saved kerncast port classifier (kind 'kerncast-port')")
        model = cls(float(data["threshold"]), data["method"], int(data["n_folds"]),
                    int(data["seed"]))
        model.method_ = data["method_"]
        model.scores_ = {str(k): float(v) for k, v in data["scores"].items()}
        if model.method_ == "regression":
            model.regression_ = KerncastModel.from_dict(data["regression"])
        else:
            model.prep_ = _Prep.from_dict(data["prep"])
            model.coef_ = np.asarray(data["coef"], dtype=float)
            model.intercept_ = float(data["intercept"])
            model.constant_ = data["constant"]
        return model

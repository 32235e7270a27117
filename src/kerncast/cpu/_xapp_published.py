"""XAPP's model as published (section 3.3 and 5.2 of the seed): four features, OLS on all
their interactions, chosen by the two-stage search with repeated random sub-sampling.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kerncast._errors import InputError, NotFittedError
from kerncast.cpu._features import FEATURES
from kerncast.cpu._xapp_data import feature_matrix, kernel_groups, speedup_column
from kerncast.cpu._xapp_search import (
    RESPONSES,
    MinMax,
    SearchResult,
    _solve_splits,
    from_response,
    interaction_names,
    interaction_terms,
    search_feature_sets,
    to_response,
)

__all__ = ["PublishedModel"]

_KIND = "xapp-published"


def _ols(frame: pd.DataFrame, features: tuple[str, ...], speedup: np.ndarray,
         response: str) -> tuple[tuple[str, ...], MinMax, np.ndarray]:
    """OLS of ``response`` on the interaction terms of ``features``, min-max normalised
    with ``frame``'s statistics (the same tiny ridge as the search)."""
    chosen = feature_matrix(frame, features)
    scaler = MinMax.fit(chosen)
    terms = interaction_terms(scaler(chosen))[None]
    coef = _solve_splits(terms, to_response(speedup, response), np.ones((1, len(speedup))), 1e-8)
    return features, scaler, coef[0, 0]


@dataclass
class PublishedModel:
    """The seed's final model: ``k`` features and all their interactions, fitted by OLS.

    ``response`` is ``speedup`` (the seed's choice), ``log``, ``sqrt``, or ``auto``: the
    search runs for each of ``responses`` and keeps the one whose best set has the lowest
    cross-validation error on the training data (never on a test set). Features are
    min-max normalised with the training data's statistics (the seed normalises them).

    ``clip`` (not in the seed) bounds the predictions by the training speedups, in the
    search and after: 16 interaction terms of long-tailed features extrapolate wildly
    (a log response then predicts 1e20x); without it such sets still lose the search, but
    one far-off test row can dominate a mean error.
    """

    n_random: int = 10_000
    pool_size: int = 12
    n_splits: int = 100
    k: int = 4
    response: str = "auto"
    responses: tuple[str, ...] = RESPONSES
    seed: int = 0
    clip: bool = True
    features_: tuple[str, ...] = ()
    response_: str = ""
    scaler_: MinMax | None = None
    coef_: np.ndarray | None = None
    cv_error_: float = float("nan")
    cv_errors_: dict[str, float] = field(default_factory=dict)
    searches_: dict[str, SearchResult] = field(default_factory=dict)
    others_: dict[str, tuple[tuple[str, ...], MinMax, np.ndarray]] = field(default_factory=dict)
    range_: tuple[float, float] = (0.0, float("inf"))
    build_seconds_: float = float("nan")

    def _responses(self) -> tuple[str, ...]:
        chosen = self.responses if self.response == "auto" else (self.response,)
        bad = [r for r in chosen if r not in RESPONSES]
        if bad or not chosen:
            raise InputError(f"unknown response {', '.join(bad) or '(none)'}; use auto or one of "
                             f"{', '.join(RESPONSES)}")
        return tuple(chosen)

    def fit(self, frame: pd.DataFrame,
            progress: Callable[[str], None] | None = None) -> PublishedModel:
        """Search the feature sets on ``frame`` (features, ``speedup``, ``kernel``) and fit
        the final OLS on all of it (the seed's Fig. 2 step 1)."""
        started = time.perf_counter()
        x, y, groups = feature_matrix(frame), speedup_column(frame), kernel_groups(frame)
        scaled = MinMax.fit(x)(x)
        self.searches_ = {}
        for response in self._responses():
            self.searches_[response] = search_feature_sets(
                scaled, y, groups, FEATURES, k=self.k, n_random=self.n_random,
                pool_size=self.pool_size, n_splits=self.n_splits, response=response,
                seed=self.seed, clip=self.clip, progress=progress)
        self.cv_errors_ = {r: s.cv_error for r, s in self.searches_.items()}
        self.response_ = min(self.cv_errors_, key=lambda r: self.cv_errors_[r])
        self.others_ = {r: _ols(frame, s.features, y, r) for r, s in self.searches_.items()}
        self.features_, self.scaler_, self.coef_ = self.others_[self.response_]
        self.cv_error_ = self.cv_errors_[self.response_]
        self.range_ = (float(y.min()), float(y.max()))
        self.build_seconds_ = time.perf_counter() - started
        return self

    def _terms(self, frame: pd.DataFrame) -> np.ndarray:
        if self.coef_ is None or self.scaler_ is None:
            raise NotFittedError("the XAPP model is not fitted; call fit() or from_dict() first")
        return interaction_terms(self.scaler_(feature_matrix(frame, self.features_)))

    def predict(self, frame: pd.DataFrame, response: str | None = None) -> np.ndarray:
        """The predicted speedup of every row (the seed's step 3: evaluate the function).

        ``response`` picks the best model of another response searched by :meth:`fit`
        (kept in ``others_``, not saved by :meth:`to_dict`), to compare them held out.
        """
        if response is not None and response != self.response_:
            if response not in self.others_:
                raise InputError(f"no {response!r} model was searched; fit with response='auto' "
                                 f"or {response!r}")
            features, scaler, coef = self.others_[response]
            terms = interaction_terms(scaler(feature_matrix(frame, features)))
            return self._bound(from_response(terms @ coef, response))
        terms = self._terms(frame)
        assert self.coef_ is not None
        return self._bound(from_response(terms @ self.coef_, self.response_))

    def _bound(self, speedup: np.ndarray) -> np.ndarray:
        return np.clip(speedup, *self.range_) if self.clip else speedup

    def term_names(self) -> list[str]:
        """The 2**k term names: ``1``, each feature, and every product of them."""
        return interaction_names(self.features_)

    def explain(self, row: pd.Series | pd.DataFrame) -> dict[str, Any]:
        """The seed's step 4: each term's coefficient, its (normalised) value and its
        contribution to the response, largest first, with the raw feature values."""
        frame = row.to_frame().T if isinstance(row, pd.Series) else row.iloc[:1]
        terms = self._terms(frame)[0]
        assert self.coef_ is not None
        contrib = self.coef_ * terms
        order = np.argsort(-np.abs(contrib), kind="stable")
        names = self.term_names()
        return {
            "model": _KIND,
            "response": self.response_,
            "prediction": float(self._bound(from_response(contrib.sum(), self.response_))),
            "features": {f: float(v) for f, v in
                         zip(self.features_, feature_matrix(frame, self.features_)[0])},
            "terms": [{"term": names[i], "coefficient": float(self.coef_[i]),
                       "value": float(terms[i]), "contribution": float(contrib[i])}
                      for i in order],
        }

    def to_dict(self) -> dict[str, Any]:
        """The fitted model as JSON-ready data (:meth:`from_dict` reads it back)."""
        if self.coef_ is None or self.scaler_ is None:
            raise NotFittedError("the XAPP model is not fitted; nothing to save")
        return {
            "kind": _KIND, "features": list(self.features_), "response": self.response_,
            "low": self.scaler_.low.tolist(), "span": self.scaler_.span.tolist(),
            "coef": self.coef_.tolist(), "cv_error": self.cv_error_,
            "cv_errors": dict(self.cv_errors_), "build_seconds": self.build_seconds_,
            "range": list(self.range_),
            "params": {"n_random": self.n_random, "pool_size": self.pool_size,
                       "n_splits": self.n_splits, "k": self.k, "response": self.response,
                       "responses": list(self.responses), "seed": self.seed,
                       "clip": self.clip},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PublishedModel:
        """A fitted model from :meth:`to_dict`'s data."""
        if not isinstance(data, dict) or data.get("kind") != _KIND:
            raise InputError(f"not a saved XAPP published model (kind {_KIND!r} expected)")
        params = dict(data["params"])
        params["responses"] = tuple(params["responses"])
        model = cls(**params)
        model.features_ = tuple(data["features"])
        model.response_ = data["response"]
        model.scaler_ = MinMax(np.asarray(data["low"], dtype=float),
                               np.asarray(data["span"], dtype=float))
        model.coef_ = np.asarray(data["coef"], dtype=float)
        model.cv_error_ = float(data["cv_error"])
        model.cv_errors_ = {str(k): float(v) for k, v in data["cv_errors"].items()}
        model.build_seconds_ = float(data["build_seconds"])
        low, high = data["range"]
        model.range_ = (float(low), float(high))
        return model

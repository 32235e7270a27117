"""The seed's intermediate models (sections 3.3 and 5.1): ordinary and weighted least
squares on the single features, and LASSO with 2-way interactions and squares, each on
the speedup, its log and its square root, on min-max normalised features.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LassoCV, LinearRegression
from sklearn.preprocessing import PolynomialFeatures

from kerncast._errors import InputError
from kerncast.cpu._xapp_data import feature_matrix, kernel_groups, speedup_column
from kerncast.cpu._xapp_own import grouped_folds
from kerncast.cpu._xapp_search import RESPONSES, MinMax, from_response, to_response

__all__ = ["BASELINES", "Baseline", "fit_baseline"]

BASELINES: tuple[str, ...] = ("ols", "wls", "lasso")


@dataclass
class Baseline:
    """A fitted intermediate model: ``predict`` gives speedups, bounded by the training
    speedups (``range``) as :class:`PublishedModel` bounds its own."""

    method: str
    response: str
    scaler: MinMax
    poly: PolynomialFeatures | None
    model: LinearRegression | LassoCV
    range: tuple[float, float]

    def _design(self, frame: pd.DataFrame) -> np.ndarray:
        z = self.scaler(feature_matrix(frame))
        return self.poly.transform(z) if self.poly is not None else z

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        return np.clip(from_response(self.model.predict(self._design(frame)), self.response),
                       *self.range)

    def terms(self) -> int:
        """Non-zero coefficients (LASSO's selected terms; all for least squares)."""
        return int(np.count_nonzero(self.model.coef_))


def _wls_weights(t: np.ndarray) -> np.ndarray:
    """The seed's weighted regression: residuals scaled by ``1 / y`` (``y`` the response),
    with ``|y|`` floored at its 5th percentile so that responses near 0 do not dominate."""
    floor = max(float(np.quantile(np.abs(t), 0.05)), 1e-6)
    return 1.0 / np.maximum(np.abs(t), floor) ** 2


def fit_baseline(method: str, response: str, frame: pd.DataFrame, n_folds: int = 5,
                 seed: int = 0) -> Baseline:
    """Fit one of :data:`BASELINES` with one of the responses on the training ``frame``.

    LASSO's penalty is chosen by K-fold cross-validation split by kernel; its design holds
    the 39 features, their pairwise products and their squares (819 terms).
    """
    if method not in BASELINES:
        raise InputError(f"unknown baseline {method!r}; use one of {', '.join(BASELINES)}")
    if response not in RESPONSES:
        raise InputError(f"unknown response {response!r}; use one of {', '.join(RESPONSES)}")
    x, y = feature_matrix(frame), speedup_column(frame)
    scaler = MinMax.fit(x)
    z, t = scaler(x), to_response(y, response)
    if method == "lasso":
        poly = PolynomialFeatures(degree=2, include_bias=False).fit(z)
        folds = grouped_folds(kernel_groups(frame), n_folds, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            lasso = LassoCV(alphas=40, cv=folds, max_iter=5000, tol=1e-3,
                            random_state=seed).fit(poly.transform(z), t)
        return Baseline(method, response, scaler, poly, lasso, (float(y.min()), float(y.max())))
    weights = _wls_weights(t) if method == "wls" else None
    return Baseline(method, response, scaler, None,
                    LinearRegression().fit(z, t, sample_weight=weights),
                    (float(y.min()), float(y.max())))

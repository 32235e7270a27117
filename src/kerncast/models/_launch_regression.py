"""A learned baseline that knows only the launch shape.

Ridge regression of log2(time) on log2 of the number of blocks, the threads per block
and the SM count, learned from the training kernels' measured times. It knows nothing of
what a kernel does, so it marks how far launch shape alone goes: a model that cannot
beat it on held-out kernels has learned nothing about kernels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kerncast._errors import InputError
from kerncast.data import Dataset
from kerncast.models._base import Predictor
from kerncast.models.registry import register

__all__ = ["LaunchRegression"]

_FEATURES = ("blocks", "threads_per_block", "sm_count")


def _features(times: pd.DataFrame) -> np.ndarray:
    missing = [c for c in _FEATURES if c not in times]
    if missing:
        raise InputError(f"the times table lacks {', '.join(missing)}, which launch-regression "
                         "reads; use a dataset written by kerncast measure")
    values = times[list(_FEATURES)].to_numpy(dtype=float)
    return np.log2(np.clip(values, 1.0, None))


@register
class LaunchRegression(Predictor):
    """Ridge regression of log time on launch shape (blocks, block size, SMs).

    Parameters
    ----------
    alpha
        Ridge regularisation strength (on standardised features).
    """

    name = "launch-regression"
    needs = frozenset()
    description = "ridge regression of log time on log blocks, threads per block and SMs"
    insight = "ETP only: how far the launch shape alone goes (a floor for learned models)"
    learned = True
    columns = _FEATURES

    def __init__(self, *, alpha: float = 1.0):
        self.alpha = alpha

    def _fit(self, dataset: Dataset) -> None:
        from sklearn.linear_model import Ridge  # noqa: PLC0415 (on use: scikit-learn)
        from sklearn.pipeline import make_pipeline  # noqa: PLC0415 (on use: scikit-learn)
        from sklearn.preprocessing import StandardScaler  # noqa: PLC0415 (on use: scikit-learn)

        times = dataset.ok_times()
        times = times[np.isfinite(times["time_median_s"]) & (times["time_median_s"] > 0)]
        if len(times) < 2:
            raise InputError(f"launch-regression needs at least 2 measured rows to learn from, "
                             f"got {len(times)}; train on more kernels")
        model = make_pipeline(StandardScaler(), Ridge(alpha=self.alpha))
        model.fit(_features(times), np.log2(times["time_median_s"].to_numpy(dtype=float)))
        self.model_ = model
        self.n_train_ = len(times)

    def _predict(self, dataset: Dataset) -> np.ndarray:
        if len(dataset.times) == 0:
            return np.empty(0)
        return np.exp2(self.model_.predict(_features(dataset.times)))

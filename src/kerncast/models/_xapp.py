"""XAPP: the GPU speedup of CPU code, from the features of the running CPU region.

Ardalani et al., "Cross-Architecture Performance Prediction (XAPP) Using CPU Code to
Predict GPU Performance", MICRO 2015 (``../shared/seeds/xapp-cpu-code-to-gpu-speedup.txt``).
The CPU region is profiled (:mod:`kerncast.cpu`: the seed's 39 microarchitecture-
independent features of Table 1); a model learned per CPU+GPU platform maps them to the
speedup ``t_CPU / t_GPU`` of the GPU port (Fig. 2). As a :class:`Predictor` it predicts
the GPU time of a dataset row as the row's CPU time over the predicted speedup.

What differs from the seed, and why:

- The features come from LLVM IR operations (``clang-14 -O2``, no vectorisation), not
  x86 instructions under Pin; ILP, strides, reuse and branch divergence are measured on
  sampled intervals (:mod:`kerncast.cpu._profile` says how).
- The training programs are kerncast's corpus (58 kernels x 3 sizes), not the seed's 104
  kernels of Rodinia, Parboil and others; the CPU is the GPU machines' Xeon.
- The model is kerncast's own (:class:`kerncast.cpu._xapp.KerncastModel`: a log response,
  chosen among regularised and boosted candidates by cross-validation by kernel), which
  beats the seed's 4-feature model held out by kernel (``benchmarks/xapp_accuracy.py``);
  the published model is :class:`kerncast.cpu._xapp.PublishedModel`.
- Only the port as written is predicted: the corpus kernel's default launch on the whole
  GPU. Other launch configurations and SM counts are not predicted (NaN).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from kerncast._errors import InputError, NotFittedError
from kerncast.data import Dataset
from kerncast.models._base import LaunchInputs, Prediction, Predictor
from kerncast.models.registry import register

__all__ = ["XappSpeedup"]

_KEY = ["kernel", "size"]
#: Besides the 39 features, the model reads the region's CPU time: known before any GPU
#: code exists, it separates regions too short to leave a GPU's launch cost behind.
EXTRA = ("cpu_s",)


def _cpu_rows(dataset: Dataset) -> pd.DataFrame:
    cpu = dataset.cpu
    if len(cpu) == 0 or "time_median_s" not in cpu:
        raise InputError("xapp needs the dataset's cpu table (single-threaded C times of each "
                         "kernel); measure it with kerncast measure corpus --experiments cpu")
    cpu = cpu[(cpu["status"] == "ok") & (cpu["time_median_s"] > 0)]
    return cpu[[*_KEY, "config", "time_median_s"]].rename(columns={"time_median_s": "cpu_s"})


def _port_rows(dataset: Dataset) -> pd.DataFrame:
    """The rows of ``times`` xapp speaks for: the C version's launch (the port as written)
    on the whole GPU, joined with the CPU time. Keeps the row's position in ``times``."""
    times = dataset.times.reset_index(drop=True).assign(_row=lambda t: np.arange(len(t)))
    if "experiment" in times:
        times = times[times["experiment"] == "times"]
    if "sm_count" in times and len(times):
        times = times[times["sm_count"] == times["sm_count"].max()]
    return times.merge(_cpu_rows(dataset), on=[*_KEY, "config"], how="inner")


def _with_features(rows: pd.DataFrame, features: pd.DataFrame) -> pd.DataFrame:
    return rows.merge(features, on=_KEY, how="inner")


@register
class XappSpeedup(Predictor):
    """The GPU speedup of a CPU region from its 39 XAPP features (see the module docstring).

    Parameters
    ----------
    features
        A Parquet file of ``kernel, size`` and the 39 features of every region (default:
        the checkout's ``data/xapp/features.parquet``).
    threshold
        The speedup above which a region is worth porting (the port/no-port classifier).
    """

    name = "xapp"
    needs = frozenset({"cpu_code"})
    description = "GPU speedup of the CPU code from 39 profiled program features (XAPP)"
    insight = ("which program properties (parallelism, branch divergence, memory regularity) "
               "drive the speedup, before a line of GPU code exists")
    learned = True
    columns = ("kernel", "size", "config")

    def __init__(self, *, features: str | None = None, threshold: float = 1.0):
        self.features = features
        self.threshold = threshold

    def _features(self) -> pd.DataFrame:
        from kerncast.cpu import load_features  # noqa: PLC0415 (pandas I/O on demand)

        return load_features(self.features)

    def _fit(self, dataset: Dataset) -> None:
        from kerncast.cpu import KerncastModel, PortClassifier  # noqa: PLC0415 (on use: sklearn)

        frame = _with_features(_port_rows(dataset), self._features())
        frame = frame[frame["time_median_s"] > 0].assign(
            speedup=lambda f: f["cpu_s"] / f["time_median_s"])
        if frame["kernel"].nunique() < 5:
            raise InputError(f"xapp needs profiled CPU regions and GPU times of at least 5 "
                             f"kernels to learn from, got {frame['kernel'].nunique()}")
        model = KerncastModel(extra=EXTRA).fit(frame)
        port = PortClassifier(threshold=self.threshold).fit(frame, regression=model)
        self.model_ = model.to_dict()
        self.port_ = port.to_dict()
        self.n_train_ = len(frame)
        self.kernels_ = sorted(frame["kernel"].unique())

    def _regression(self) -> Any:
        from kerncast.cpu import KerncastModel  # noqa: PLC0415 (on use: sklearn.ensemble)

        return KerncastModel.from_dict(self.model_)

    def _predict(self, dataset: Dataset) -> np.ndarray:
        out = np.full(len(dataset.times), np.nan)
        if len(dataset.times) == 0 or len(dataset.cpu) == 0:
            return out
        frame = _with_features(_port_rows(dataset), self._features())
        if len(frame):
            speedup = self._regression().predict(frame)
            out[frame["_row"].to_numpy()] = frame["cpu_s"].to_numpy() / speedup
        return out

    def explain_launch(self, kernel: Any, launch: Any, inputs: LaunchInputs) -> Prediction:
        raise InputError("xapp predicts from CPU code, not from a GPU kernel: profile the C "
                         "region with kerncast speedup PROGRAM.c --region FUNCTION, or choose "
                         "another --model (static, sampling) for this kernel")

    # -- the user's CPU region ------------------------------------------------------

    def speedup(self, features: dict[str, float], cpu_s: float, level: float = 0.8,
                threshold: float | None = None) -> dict[str, Any]:
        """The predicted speedup of one profiled region that runs ``cpu_s`` seconds on the
        CPU, its interval, whether it is worth porting (above ``threshold``, default the
        trained classifier's), and the terms that drove the answer (the seed's step 4)."""
        from kerncast.cpu import PortClassifier  # noqa: PLC0415 (on use: sklearn.ensemble)

        if not getattr(self, "model_", None):
            raise NotFittedError("the xapp model is not fitted; train it or load a trained one")
        if not cpu_s > 0:
            raise InputError(f"the region's CPU time must be positive, not {cpu_s}")
        frame = pd.DataFrame([{**features, "cpu_s": cpu_s}])
        model = self._regression()
        low, high = model.predict_interval(frame, level)
        port = PortClassifier.from_dict(self.port_)
        if threshold is None or threshold == port.threshold:
            threshold, worth, method = port.threshold, bool(port.predict(frame)[0]), port.method_
        elif threshold > 0:
            worth, method = bool(model.predict_median(frame)[0] > threshold), "regression"
        else:
            raise InputError(f"the speedup threshold must be positive, not {threshold:g}")
        return {"speedup": float(model.predict(frame)[0]), "low": float(low[0]),
                "high": float(high[0]), "level": level, "threshold": threshold,
                "port": worth, "port_method": method,
                "explain": model.explain(frame), "trained_on": len(self.kernels_),
                "candidate": model.candidate_, "cv_weighted_error": model.scores_.get(model.candidate_)}

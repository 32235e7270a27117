"""``pmac``: the PMAC framework's memory model of the stream idiom.

PMAC (Snavely et al.'s performance modelling framework, extended for accelerators by
Carrington, Tikir, Olschanowsky et al.), as the survey applies it (Madougou et al. 2016,
section 4.1, ``../shared/seeds/survey-gpgpu-performance-models.txt``):

    (1)  MemTime = sum_i #MemRef_i x RefSize / MemBW_stream(s)
    (2)  MemBW_stream(s) = alpha max(0, h - s) + beta max(0, s - h) + gamma

The survey's fit of (2) on its GPU is alpha = -0.0020, beta = 0.0003, gamma = 7.0709 with
the hinge h = 3072; kerncast fits alpha, beta, gamma and h again here.

* ``#MemRef_i x RefSize``: the global memory a launch references, from kerncast's static
  work counts (the ``emulator`` provider: every warp request's 32-byte sectors, summed
  over the kernel's memory instructions; this plays the part of PEBIL's basic blocks and
  their references).
* ``s``: the data size, the bytes of all the launch's buffers (the working set).
* ``MemBW_stream``: fitted in ``fit`` on the training kernels' stream idioms (kernels the
  corpus tags ``streaming``, ``vector-access`` or ``alignment``: the copies, the scaled
  copy ``arith_mixed``, ...; rows of at most ``max_intensity`` flops per byte, so that a
  stream that turned compute-bound is left out, measured on the whole GPU): each row's
  bandwidth is its bytes over its measured time; the hinge ``h`` is chosen among the
  training sizes, ``alpha``, ``beta`` and ``gamma`` by least squares weighted for relative
  error (bandwidths span orders of magnitude), one curve per device. Where the training
  streams have one data size (no two differ by a factor of 2, as with ``--sizes
  medium``), (2) cannot be identified and reduces to its constant ``gamma``. ``size_scale="log"``
  puts ``log2 s`` in place of ``s`` in (2) (sizes span 64 KB to gigabytes);
  ``"linear"`` is (2) as published. A predicted bandwidth is kept at or above the
  smallest the training streams showed. Without stream kernels in the training data
  the curve is the spec's peak bandwidth, and ``based_on`` says so.

needs: ``source`` (references come from emulating the kernel) and ``spec``.
insight: ETP only (the survey's Table 2 and its section 8): no bottleneck, no hint.

It predicts the time of memory-bound kernels only: (1) has no compute term, so a
compute-bound kernel is predicted as fast as its memory traffic. A kernel whose
addresses depend on its data (BFS, SpMV, histograms, sorting) at sizes the emulator does
not run has no idiom PMAC can read: NaN (the survey could not model BFS either); so has
a launch whose blocks run past the emulator's step limit.

Not reproduced: PIR's idiom recognition (the stream set is the corpus's tags), PEBIL's
binary instrumentation (the emulator's trace instead), and separate curves per idiom
(gather/scatter): one stream curve serves every kernel. The model has no SM-count term:
rows of the SM sweep get the whole GPU's curve.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kerncast._errors import InputError
from kerncast.corpus import get_kernel
from kerncast.data import Dataset
from kerncast.devices import get_device
from kerncast.models._base import Prediction, Predictor
from kerncast.models._rows import corpus_launch
from kerncast.models.registry import register
from kerncast.models.work import WorkUnavailable
from kerncast.models.zoo._pram import launch_work

__all__ = ["STREAM_TAGS", "Pmac", "constant_bandwidth", "fit_stream_bandwidth",
           "stream_bandwidth"]

#: Corpus tags of the stream idiom (copy, scale, add-like kernels).
STREAM_TAGS = frozenset({"streaming", "vector-access", "alignment"})


def stream_bandwidth(x: np.ndarray | float | list[float], curve: Sequence[float]) -> np.ndarray:
    """Eq. (2): ``alpha max(0, h - x) + beta max(0, x - h) + gamma``, with ``curve`` =
    (alpha, beta, gamma, h)."""
    alpha, beta, gamma, hinge = curve
    x = np.asarray(x, dtype=float)
    return alpha * np.maximum(0.0, hinge - x) + beta * np.maximum(0.0, x - hinge) + gamma


def fit_stream_bandwidth(x: np.ndarray, bandwidth: np.ndarray) -> tuple[float, float, float, float]:
    """Eq. (2) fitted to measured bandwidths: the hinge among the sizes ``x`` whose weighted
    least squares (weights 1 / bandwidth, for relative error) leaves the least error.

    Raises
    ------
    InputError
        With fewer than 3 points or 2 distinct sizes.
    """
    x, bandwidth = np.asarray(x, dtype=float), np.asarray(bandwidth, dtype=float)
    if len(x) < 3 or len(np.unique(x)) < 2:
        raise InputError("fitting the stream bandwidth needs at least 3 rows at 2 data sizes")
    best: tuple[float, tuple[float, float, float, float]] | None = None
    for hinge in np.unique(x):
        basis = np.column_stack([np.maximum(0.0, hinge - x), np.maximum(0.0, x - hinge),
                                 np.ones_like(x)]) / bandwidth[:, None]
        coef, *_ = np.linalg.lstsq(basis, np.ones_like(x), rcond=None)
        loss = float(np.sum((basis @ coef - 1.0) ** 2))
        if best is None or loss < best[0]:
            best = (loss, (float(coef[0]), float(coef[1]), float(coef[2]), float(hinge)))
    assert best is not None
    return best[1]


def constant_bandwidth(bandwidth: np.ndarray) -> float:
    """Eq. (2) with one data size: the constant ``gamma`` of least relative error,
    ``sum(1 / bw) / sum(1 / bw^2)``."""
    inverse = 1.0 / np.asarray(bandwidth, dtype=float)
    return float(inverse.sum() / (inverse**2).sum())


def _is_stream(kernel: str) -> bool:
    try:
        return bool(STREAM_TAGS & set(get_kernel(kernel).spec.tags))
    except InputError:
        return False


def _data_size(row: Mapping[str, Any]) -> float:
    """Bytes of the launch's buffers (the working set ``s``)."""
    kernel, config = corpus_launch(row)
    return float(kernel.buffer_bytes(config))


@register
class Pmac(Predictor):
    """PMAC's memory time of the stream idiom, Eqs. (1)-(2) (see the module docstring).

    Parameters
    ----------
    work
        Work provider of the memory references (bytes).
    size_scale
        ``"log"`` (log2 of the data size in Eq. (2)) or ``"linear"`` (the size in MiB, as
        published; the survey does not give its unit).
    max_intensity
        Largest flops per byte of a training row that counts as a stream.
    """

    name = "pmac"
    needs = frozenset({"source", "spec"})
    description = ("PMAC: the bytes a launch references over the stream bandwidth at its data "
                   "size, a hinge curve fitted on the training kernels' streams")
    insight = "ETP only, for memory-bound kernels (the survey's Table 2)"
    learned = True
    columns = ("kernel", "language", "size", "tunables", "device", "sm_count")

    def __init__(self, *, work: str = "emulator", size_scale: str = "log",
                 max_intensity: float = 1.0):
        self.work = work
        self.size_scale = size_scale
        self.max_intensity = max_intensity

    def _x(self, size_bytes: np.ndarray | float) -> np.ndarray:
        if self.size_scale == "log":
            return np.log2(np.maximum(np.asarray(size_bytes, dtype=float), 1.0))
        if self.size_scale == "linear":
            return np.asarray(size_bytes, dtype=float) / 2**20
        raise InputError(f"pmac: size_scale {self.size_scale!r} is not one of log, linear")

    def _fit(self, dataset: Dataset) -> None:
        self._x(1.0)  # an unknown size_scale fails here
        points = self._stream_points(dataset)
        self.curves_: dict[str, list[float]] = {}
        self.floors_: dict[str, float] = {}
        self.stream_kernels_: list[str] = sorted(points["kernel"].unique()) if len(points) else []
        for device, part in (points.groupby("device") if len(points) else []):
            bandwidth, sizes = part["bandwidth"].to_numpy(float), part["size_bytes"].to_numpy(float)
            if len(sizes) < 3 or sizes.max() < 2 * sizes.min():  # one size: (2) is gamma
                curve = (0.0, 0.0, constant_bandwidth(bandwidth), float(self._x(sizes.min())))
            else:
                curve = fit_stream_bandwidth(self._x(sizes), bandwidth)
            self.curves_[str(device)] = list(curve)
            self.floors_[str(device)] = float(bandwidth.min())

    def _stream_points(self, dataset: Dataset) -> pd.DataFrame:
        """Training rows of stream kernels on the whole GPU: size, bytes, bandwidth."""
        times = dataset.ok_times()
        records = []
        for row in times.to_dict("records"):
            if not _is_stream(str(row["kernel"])) or not _whole_gpu(row):
                continue
            try:
                work = launch_work(row, self.work)
            except WorkUnavailable:
                continue
            seconds = float(row["time_median_s"])
            if work.bytes_global <= 0 or not seconds > 0 or \
                    work.flops > self.max_intensity * work.bytes_global:
                continue
            records.append({"kernel": row["kernel"], "device": get_device(str(row["device"])).key,
                            "size_bytes": _data_size(row),
                            "bandwidth": work.bytes_global / seconds})
        return pd.DataFrame(records)

    def _one(self, row: Mapping[str, Any]) -> Prediction:
        try:
            work = launch_work(row, self.work)
            size = _data_size(row)
        except (WorkUnavailable, InputError) as exc:
            return Prediction(math.nan, self.name, based_on={"error": f"no idiom: {exc}"})
        bandwidth, curve = self._bandwidth(str(row["device"]), size)
        seconds = work.bytes_global / bandwidth
        return Prediction(seconds, self.name, breakdown={"memory": seconds}, bottleneck="memory",
                          based_on={"work": work.source, "bytes": work.bytes_global,
                                    "data_size_bytes": size, "bandwidth_gbs": bandwidth / 1e9,
                                    "curve": curve, "size_scale": self.size_scale,
                                    "stream_kernels": len(self.stream_kernels_)})

    def _bandwidth(self, device_name: str, size: float) -> tuple[float, str | list[float]]:
        device = get_device(device_name)
        curve = self.curves_.get(device.key)
        if curve is None:
            return device.memory.peak_bandwidth_gbs * 1e9, "spec peak: no stream in the training data"
        fitted = float(stream_bandwidth(self._x(size), curve))
        return max(fitted, self.floors_[device.key]), curve


def _whole_gpu(row: Mapping[str, Any]) -> bool:
    try:
        return int(row["sm_count"]) == get_device(str(row["device"])).compute.sm_count
    except (TypeError, ValueError, KeyError):
        return True

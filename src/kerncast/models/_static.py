"""The static predictor: source + launch + device spec and calibration, no GPU run.

Registered as ``static``. For every target row it compiles the kernel for the row's
device, emulates one round of resident blocks on the CPU and simulates it on the
warp-pipeline model (:mod:`kerncast.sim`), then scales to the grid. Rows it cannot
predict (a launch the device cannot run, an instruction the emulator does not
support) get NaN and the reason in :meth:`explain`.
"""

from __future__ import annotations

import numpy as np

from kerncast._errors import KerncastError
from kerncast.data import Dataset
from kerncast.models._base import Prediction, Predictor
from kerncast.models._rows import corpus_launch
from kerncast.models.registry import register

__all__ = ["StaticSimulator"]


@register
class StaticSimulator(Predictor):
    """Emulate one round of resident blocks, simulate it on the warp pipeline, scale."""

    name = "static"
    needs = frozenset({"source", "spec"})
    description = ("Static analysis and trace simulation: the PTX emulated on the CPU for one "
                   "round of resident blocks, a warp-pipeline model calibrated by "
                   "micro-benchmarks, scaled by waves")
    insight = "compute, memory, latency and synchronisation time, and the bottleneck"
    columns = ("kernel", "language", "size", "config", "tunables", "device", "sm_count")

    def __init__(self, *, seed: int = 0, budget: int = 400_000):
        self.seed = seed
        self.budget = budget

    def _one(self, row) -> Prediction:
        from kerncast.sim import predict_launch  # noqa: PLC0415

        try:
            kernel, config = corpus_launch(row)
            source, launch = kernel.instance(config, str(row.get("language") or "cuda"),
                                             self.seed)
            result = predict_launch(source, launch, str(row["device"]),
                                    sm_count=int(row["sm_count"]) if row.get("sm_count") else None)
        except KerncastError as exc:
            return Prediction(float("nan"), self.name, based_on={"error": str(exc)})
        return Prediction(result.seconds, self.name, breakdown=result.breakdown,
                          bottleneck=result.bottleneck, based_on=result.based_on)

    def explain(self, dataset: Dataset) -> list[Prediction]:
        self._check_fitted()
        return [self._one(row) for row in dataset.times.to_dict("records")]

    def _predict(self, dataset: Dataset) -> np.ndarray:
        return np.array([p.seconds for p in self.explain(dataset)], dtype=float)

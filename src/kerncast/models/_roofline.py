"""The roofline baseline: a launch is limited by arithmetic or by DRAM bandwidth.

    time = max(flops_fp32 / P32 + flops_fp64 / P64,  bytes / B) + launch_overhead

``P32``/``P64`` are the device's spec peak rates (an FMA counted as two operations, at
the boost clock) scaled by ``sm_count / spec SM count`` for the row's hardware
configuration; ``B`` is the spec's DRAM bandwidth, not scaled (bandwidth is shared by
all SMs). For a kernel of one precision the compute term is ``flops / peak(dtype)`` of
its dominant precision; a kernel that mixes both pays for both.

``launch_overhead_s`` defaults to 3.8 µs: an empty kernel timed with CUDA events on an
H100 SXM5, host launch gaps excluded by queueing a busy-wait kernel ahead of it (see
docs/DESIGN.md, "Facts measured on the H100"). It is used for every device until
measured there.

The flops and bytes come from a work provider (``kerncast.models.work``); ``work="auto"``
takes the best that answers, and each :class:`Prediction` records which one it was.
"""

from __future__ import annotations

from typing import Any


from kerncast.data import Dataset
from kerncast.devices import get_device
from kerncast.models._base import Prediction, Predictor
from kerncast.models._rows import corpus_launch, tunables_of
from kerncast.models.registry import register
from kerncast.models.work import WorkCounts, work_counts

__all__ = ["LAUNCH_OVERHEAD_H100_S", "Roofline"]

#: Empty-kernel time on an H100 SXM5 with host gaps excluded (DESIGN.md, measured).
LAUNCH_OVERHEAD_H100_S = 3.8e-6


@register
class Roofline(Predictor):
    """Roofline baseline: max(compute time at peak, DRAM time at peak) + launch overhead.

    Parameters
    ----------
    work
        Work source: a provider name from ``kerncast.models.work.list_providers()``, or
        ``"auto"`` for the best one that can count the kernel.
    launch_overhead_s
        Fixed cost of a launch added to every prediction (seconds).
    """

    name = "roofline"
    needs = frozenset({"source", "spec"})
    description = ("max(flops / peak flops, bytes / peak bandwidth) + launch overhead, at the "
                   "device's spec peaks scaled to the row's SM count")
    insight = "ETP as a bound; PBA: compute- or memory-bound, arithmetic intensity"
    learned = False
    columns = ("kernel", "size", "tunables", "device", "sm_count")

    def __init__(self, *, work: str = "auto", launch_overhead_s: float = LAUNCH_OVERHEAD_H100_S):
        self.work = work
        self.launch_overhead_s = launch_overhead_s

    def explain(self, dataset: Dataset) -> list[Prediction]:
        """A bound per row with its compute, memory and launch parts."""
        self._check_fitted()
        cache: dict[tuple, WorkCounts] = {}
        return [self._one(row, cache) for row in dataset.times.to_dict("records")]

    def _one(self, row: dict[str, Any], cache: dict[tuple, WorkCounts]) -> Prediction:
        language = str(row.get("language") or "cuda")
        key = (row["kernel"], language, row["size"], tuple(sorted(tunables_of(row).items())))
        if key not in cache:
            kernel, config = corpus_launch(row)
            cache[key] = work_counts(kernel, config, self.work, language)
        work = cache[key]
        device = get_device(str(row["device"]))
        sm_count = _int_or(row.get("sm_count"), device.compute.sm_count)
        share = sm_count / device.compute.sm_count
        peak32 = device.peak_fp32_gflops * 1e9 * share
        peak64 = device.peak_fp64_gflops * 1e9 * share
        bandwidth = device.memory.peak_bandwidth_gbs * 1e9
        compute = work.flops_fp32 / peak32 + work.flops_fp64 / peak64
        memory = work.bytes_global / bandwidth
        parts = {"compute": compute, "memory": memory, "launch": float(self.launch_overhead_s)}
        return Prediction(
            seconds=max(compute, memory) + self.launch_overhead_s, model=self.name,
            breakdown=parts, bottleneck="compute" if compute >= memory else "memory",
            based_on={"work": work.source, "device": device.key, "sm_count": sm_count,
                      "precision": work.dominant_precision, "flops": work.flops,
                      "bytes": work.bytes_global,
                      "intensity_flop_per_byte": work.flops / max(work.bytes_global, 1.0),
                      "peak_flops": peak64 if work.dominant_precision == "fp64" else peak32,
                      "peak_bandwidth": bandwidth},
        )


def _int_or(value: Any, default: int) -> int:
    try:
        result = int(value)
    except (TypeError, ValueError):
        return default
    return result if result > 0 else default

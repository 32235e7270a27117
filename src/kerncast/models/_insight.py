"""``kerncast.what_if``: a launch's bottleneck and what each fix would gain.

The static simulator predicts the launch as it is, then once per fix with that limiter
removed (:mod:`kerncast.sim._whatif`: bank conflicts, uncoalesced accesses, low
occupancy, divergence). The gain of a fix is ``time as is / time fixed``: 1.0 where the
limiter is absent or another one binds. Each prediction also places the launch on the
device's roofline (operations and DRAM bytes per second).

:func:`importance` gives the variable importance of every registered learned model that
reports one (``gpu-random-forest``: which counters drive the time), fitted on a dataset.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kerncast._errors import InputError, KerncastError
from kerncast.core import Kernel, Launch, LaunchFile
from kerncast.data import Dataset
from kerncast.devices import get_device
from kerncast.models._predict import resolve_kernel
from kerncast.models.registry import list_predictors, predictor_class

__all__ = ["WhatIf", "fixes", "importance", "what_if"]


def fixes() -> dict[str, str]:
    """Each what-if fix and what it removes (:data:`kerncast.sim._whatif.FIXES`)."""
    from kerncast.sim import FIXES  # noqa: PLC0415 (the simulator loads on use)

    return dict(FIXES)


@dataclass
class WhatIf:
    """A launch predicted as it is and with each fix; ``roofline`` places it on the
    device's roofs."""

    kernel: str
    device: str
    seconds: float
    bottleneck: str
    breakdown: dict[str, float]
    fixed: dict[str, float]
    roofline: dict[str, float]
    based_on: dict[str, Any] = field(default_factory=dict)

    def gains(self) -> dict[str, float]:
        """``time as is / time fixed`` per fix, largest first."""
        out = {fix: self.seconds / t for fix, t in self.fixed.items() if t > 0}
        return dict(sorted(out.items(), key=lambda item: -item[1]))

    def to_dict(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "device": self.device, "seconds": self.seconds,
                "bottleneck": self.bottleneck, "breakdown": self.breakdown,
                "fixed_seconds": self.fixed, "gains": self.gains(), "roofline": self.roofline,
                "based_on": self.based_on}


def what_if(kernel: str | Kernel | LaunchFile, launch: Launch | None = None, *, device: str = "h100",
            only: Iterable[str] | None = None, sm_count: int | None = None,
            size: str = "large", tunables: dict[str, int] | None = None,
            language: str = "cuda",
            progress: Callable[[str], None] | None = None) -> WhatIf:
    """Predict ``launch`` of ``kernel`` statically, as it is and with each fix
    (``only`` those, default all of :func:`fixes`) removed. ``kernel`` is a
    :class:`kerncast.Kernel` with its ``launch``, a launch file
    (:func:`kerncast.load_launch_file`), or a corpus name (``corpus:NAME``, ``DIR:NAME``)
    with ``size``, ``tunables`` and ``language``."""
    from kerncast.sim import predict_launch  # noqa: PLC0415 (the simulator loads on use)
    from kerncast.sim import check_fixes  # noqa: PLC0415 (on use: the simulator is heavy)

    chosen = check_fixes(fixes() if only is None else only)
    if isinstance(kernel, Kernel):
        if launch is None:
            raise InputError("what_if(kernel, launch): give the kerncast.Launch to predict")
        source, run = kernel, launch
    elif isinstance(kernel, LaunchFile):
        source, run = kernel.launch()
    else:
        corpus = resolve_kernel(kernel)
        source, run = corpus.instance(corpus.launch(size, tunables or {}), language)
    base = predict_launch(source, run, device, sm_count=sm_count, progress=progress)
    fixed = {}
    for fix in [f for f in fixes() if f in chosen]:
        if progress:
            progress(f"what if: {fixes()[fix]}")
        fixed[fix] = predict_launch(source, run, device, sm_count=sm_count,
                                    fixes=frozenset({fix})).seconds
    return WhatIf(source.name, base.based_on["device"], base.seconds, base.bottleneck,
                  base.breakdown, fixed, _roofline(base.based_on, base.seconds),
                  {k: v for k, v in base.based_on.items() if not isinstance(v, dict)})


def _roofline(based_on: dict, seconds: float) -> dict[str, float]:
    """The launch's operations, DRAM bytes and rates, and the device's roofs at its SMs."""
    dev = get_device(based_on["device"])
    share = based_on["sm_count"] / dev.compute.sm_count
    work = based_on["work"]
    flops = work["flops_fp32"] + work["flops_fp64"]
    return {"flops": flops, "dram_bytes": work["dram_bytes"],
            "intensity": flops / max(work["dram_bytes"], 1.0),
            "flops_per_s": flops / seconds, "bytes_per_s": work["dram_bytes"] / seconds,
            "peak_fp32": dev.peak_fp32_gflops * 1e9 * share,
            "peak_fp64": dev.peak_fp64_gflops * 1e9 * share,
            "peak_bandwidth": dev.memory.peak_bandwidth_gbs * 1e9,
            "fp64_share": work["flops_fp64"] / flops if flops else 0.0}


def importance(dataset: Dataset, top: int = 10) -> dict[str, list[tuple[str, float]]]:
    """The variable importance of each registered learned model that reports one, fitted
    on ``dataset``: its ``top`` features, largest first. Models whose needs the dataset
    cannot meet are left out."""
    out = {}
    for name in list_predictors():
        cls = predictor_class(name)
        if not cls.learned or not hasattr(cls, "importance"):
            continue
        try:
            model: Any = cls().fit(dataset)  # a learned model that reports importance
        except KerncastError:  # a model the dataset cannot train is left out
            continue
        out[name] = model.importance()[:top]
    return out

"""``kerncast.measure(...)``: measure one corpus kernel launch on a backend."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from kerncast._errors import InputError
from kerncast.corpus import CorpusKernel, get_kernel
from kerncast.measure._backend import Backend
from kerncast.measure._factory import backend_language, make_backend
from kerncast.measure._provenance import CpuMonitor, NullMonitor
from kerncast.measure._timing import TimingPolicy

__all__ = ["Measurement", "measure", "monitor_for"]


@dataclass
class Measurement:
    """The ``times`` row of one measured launch, with a few conveniences."""

    row: dict[str, Any]

    @property
    def status(self) -> str:
        return str(self.row.get("status", ""))

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def median_s(self) -> float:
        value = self.row.get("time_median_s")
        return float(value) if value is not None else math.nan

    @property
    def error(self) -> str:
        return str(self.row.get("error", ""))

    def to_dict(self) -> dict[str, Any]:
        return dict(self.row)


def monitor_for(backend: Backend) -> Any:
    """The clock monitor that suits a backend: NVML on NVIDIA GPUs, /proc/cpuinfo on CPUs."""
    if backend.kind == "cpu":
        return CpuMonitor()
    if backend.name in ("cupy", "driver", "opencl"):
        from kerncast.measure._nvml import try_nvml  # noqa: PLC0415

        return try_nvml(getattr(backend, "pci_bus_id", None)) or NullMonitor()
    return NullMonitor()


def measure(kernel: str | CorpusKernel, *, size: str = "small",
            tunables: dict[str, int] | None = None, device: str | None = None,
            backend: str | Backend = "cupy", sm_count: int | None = None, dataset: Any = None,
            policy: TimingPolicy | None = None, seed: int = 0) -> Measurement:
    """Measure one launch of a corpus kernel.

    Parameters
    ----------
    kernel
        A corpus kernel or its name (``corpus:`` prefix accepted).
    size, tunables
        The problem size and the launch's tunables (the spec's defaults where omitted).
    device
        The device (``h100``; ``cpu`` for PoCL); checked against the hardware found.
    backend
        ``cupy``, ``driver``, ``opencl``, ``pocl``, ``replay`` or a :class:`Backend`.
    sm_count
        Limit the launch to this many SMs (green context; CUDA only).
    dataset
        The dataset a ``replay`` backend serves.
    policy
        Warm-up and stopping rule (:class:`TimingPolicy`).

    Returns
    -------
    Measurement
        Its ``row`` holds every ``times`` column; failures are returned, not raised.
    """
    kernel = get_kernel(kernel) if isinstance(kernel, str) else kernel
    config = kernel.launch(size, tunables)
    if device is not None and backend != "pocl" and not str(device).startswith("cpu:"):
        from kerncast.devices import get_device  # noqa: PLC0415

        get_device(device)  # an unknown name fails here, before any GPU library loads
    if isinstance(backend, Backend):
        engine = backend
    else:
        engine = make_backend(backend, device=device, sm_count=sm_count, dataset=dataset,
                              language=backend_language(backend) if backend != "replay" else None)
    if engine.name != "replay" and engine.language not in kernel.languages:
        raise InputError(f"kernel {kernel.name} has no {engine.language} version (it has "
                         f"{', '.join(kernel.languages)}); choose another backend")
    extra = {"experiment": "sm-sweep", "sm_count_requested": sm_count} if sm_count else {}
    row = engine.measure(kernel, config, policy=policy, seed=seed, monitor=monitor_for(engine),
                         **extra)
    return Measurement(row)

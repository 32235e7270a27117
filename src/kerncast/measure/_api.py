"""``kerncast.measure(...)``: measure one kernel launch on a backend: a user's own kernel (in
Kernel Tuner's terms, or as a :class:`kerncast.Kernel` and :class:`kerncast.Launch`) or a
corpus kernel."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from kerncast._errors import InputError
from kerncast.core import Kernel, Launch, UserKernel
from kerncast.corpus import CorpusKernel, get_kernel
from kerncast.measure._backend import Backend
from kerncast.measure._job import Job, corpus_job, user_job
from kerncast.measure._factory import backend_language, make_backend
from kerncast.measure._registry import BACKEND_KINDS
from kerncast.measure._provenance import CpuMonitor, NullMonitor
from kerncast.measure._timing import TimingPolicy
from kerncast.devices import get_device

__all__ = ["Measurement", "measure", "monitor_for", "monitor_of"]


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
    """The clock monitor that suits a backend: NVML on NVIDIA GPUs, /proc/cpuinfo on CPUs
    (as its registered kind declares)."""
    if backend.kind == "cpu":
        return CpuMonitor()
    kind = BACKEND_KINDS.get(backend.name)
    return monitor_of(kind.monitor if kind is not None else "none",
                      getattr(backend, "pci_bus_id", None))


def monitor_of(name: str, pci_bus_id: str | None = None) -> Any:
    """The clock monitor ``nvml`` (NVIDIA GPUs; none where NVML is missing), ``cpu`` or
    ``none``."""
    if name == "cpu":
        return CpuMonitor()
    if name == "nvml":
        from kerncast.measure._nvml import try_nvml  # noqa: PLC0415 (nvidia-ml-py on use)

        return try_nvml(pci_bus_id) or NullMonitor()
    return NullMonitor()


def measure(kernel_name: str | CorpusKernel | Kernel, kernel_source: Any = None,
            problem_size: Any = None, arguments: Any = None, *,
            params: dict[str, Any] | None = None, answer: list | None = None,
            atol: float = 1e-6, size: str = "small", tunables: dict[str, int] | None = None,
            device: str | None = None, backend: str | Backend = "cupy",
            sm_count: int | None = None, dataset: Any = None,
            policy: TimingPolicy | None = None, seed: int = 0, **tuning: Any) -> Measurement:
    """Measure one launch of a kernel.

    As :func:`kerncast.predict` names it: Kernel Tuner's ``(kernel_name, kernel_source,
    problem_size, arguments, params=..., ...)``, a :class:`kerncast.Kernel` and
    :class:`kerncast.Launch`, or a corpus kernel (``size``, ``tunables``).

    Parameters
    ----------
    answer, atol
        For one's own kernel, as in Kernel Tuner: the expected outputs, a list in argument
        order (``None`` where an argument is not checked), compared within ``atol``. Without
        it nothing is checked: a reference is optional.
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
    if device is not None and backend != "pocl" and not str(device).startswith("cpu:"):
        get_device(device)  # an unknown name fails here, before any GPU library loads
    own = _own_job(kernel_name, kernel_source, problem_size, arguments, params, answer, atol,
                   tuning)
    if isinstance(backend, Backend):
        engine = backend
    else:
        engine = make_backend(backend, device=device, sm_count=sm_count, dataset=dataset,
                              language=backend_language(backend) if backend != "replay" else None)
    job = own or _corpus(kernel_name, size, tunables, engine)
    if engine.name != "replay" and job.kernel.language not in (engine.language, "ptx"):
        raise InputError(f"{job.where} is {job.kernel.language}, which the {engine.name} "
                         f"backend does not run (it runs {engine.language}); choose another "
                         "backend")
    extra = {"experiment": "sm-sweep", "sm_count_requested": sm_count} if sm_count else {}
    row = engine.measure(job, policy=policy, seed=seed, monitor=monitor_for(engine), **extra)
    return Measurement(row)


def _own_job(kernel_name, kernel_source, problem_size, arguments, params, answer, atol,
             tuning) -> Job | None:
    """The job of one's own kernel, or None for a corpus kernel."""
    if isinstance(kernel_name, Kernel):
        if not isinstance(kernel_source, Launch):
            raise InputError("measure(kernel, launch) takes a kerncast.Launch as its second "
                             "argument")
        return user_job(kernel_name, kernel_source, answer=answer, atol=atol)
    if kernel_source is None:
        if tuning or arguments is not None or problem_size is not None or answer is not None:
            raise InputError(f"{kernel_name!r}: problem_size, arguments, answer and the tuning "
                             "options go with a kernel_source; for a corpus kernel give size= "
                             "and tunables=")
        return None
    user = UserKernel.of(kernel_name, kernel_source, problem_size, arguments, **tuning)
    return user_job(*user.instance(params), answer=answer, atol=atol)


def _corpus(kernel: str | CorpusKernel, size: str, tunables: dict | None,
            engine: Backend) -> Job:
    kernel = get_kernel(kernel) if isinstance(kernel, str) else kernel
    config = kernel.launch(size, tunables)
    if engine.name != "replay" and engine.language not in kernel.languages:
        raise InputError(f"kernel {kernel.name} has no {engine.language} version (it has "
                         f"{', '.join(kernel.languages)}); choose another backend")
    return corpus_job(kernel, config, engine.language)

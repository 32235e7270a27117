"""Measurement: run kernels for real and record what happened.

Backends (:class:`Backend`) compile, move buffers, launch and time: CuPy and the
driver API (green contexts limiting the SM count) on NVIDIA GPUs, OpenCL on PoCL
CPUs and NVIDIA GPUs, and a replay backend serving recorded rows. Observers measure
beside the time: Nsight Compute counters (:class:`NcuObserver`) and NVML energy
(:class:`NvmlEnergyObserver`). :func:`measure_config` is the careful timing harness
every ``times`` row comes from; :class:`Campaign` measures the corpus into a dataset.
GPU libraries are imported only when a backend is created.

``kerncast.measure`` is also callable: ``kerncast.measure("matmul_tiled", ...)`` is
:func:`measure`.
"""

from __future__ import annotations

from kerncast._lazy import LazyNames

import sys
import types
from typing import Any

__all__ = [
    "BACKENDS",
    "Backend",
    "BaseRun",
    "Campaign",
    "CompileError",
    "Compiled",
    "CupyBackend",
    "DriverBackend",
    "LaunchError",
    "Measurement",
    "NcuObserver",
    "NvmlEnergyObserver",
    "OpenCLBackend",
    "ReplayBackend",
    "Resources",
    "TimingPolicy",
    "TimingStats",
    "BACKEND_KINDS",
    "DEFAULT_SM_COUNTS",
    "corpus_job",
    "launch_columns",
    "make_backend",
    "measure",
    "measure_base_run",
    "measure_config",
    "measure_energy",
    "measure_full",
    "measure_samples",
    "offset_slice",
    "profile_job",
    "resident_blocks",
    "time_repeatedly",
    "upload_args",
    "user_job",
    "parse_gpus",
    "run_on_gpus",
]

_WHERE = {
    "BACKENDS": "_factory", "make_backend": "_factory",
    "Backend": "_backend", "CompileError": "_backend", "Compiled": "_backend",
    "LaunchError": "_backend", "Resources": "_backend", "offset_slice": "_backend",
    "Campaign": "_campaign",
    "CupyBackend": "_cupy", "DriverBackend": "_driver", "OpenCLBackend": "_opencl",
    "ReplayBackend": "_replay",
    "Measurement": "_api", "measure": "_api",
    "NcuObserver": "_ncu", "NvmlEnergyObserver": "_nvml",
    "TimingPolicy": "_timing", "TimingStats": "_timing", "time_repeatedly": "_timing",
    "measure_config": "_run", "launch_columns": "_run", "measure_energy": "_energy",
    "measure_samples": "_samples", "measure_full": "_samples", "resident_blocks": "_samples",
    "upload_args": "_session", "user_job": "_job", "corpus_job": "_job",
    "profile_job": "_counters", "DEFAULT_SM_COUNTS": "_plan",
    "BACKEND_KINDS": "_registry",
    "parse_gpus": "_gpus", "run_on_gpus": "_gpus",
    "BaseRun": "_baserun", "measure_base_run": "_baserun",
}


_lazy = LazyNames(__name__, _WHERE, globals())


def __getattr__(name: str) -> Any:
    return _lazy.get(name)


def __dir__() -> list[str]:
    return _lazy.names()


class _CallableModule(types.ModuleType):
    """Lets ``kerncast.measure(...)`` work whether the name holds the function or this package."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return __getattr__("measure")(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

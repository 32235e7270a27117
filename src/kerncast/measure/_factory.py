"""Backends by name, as the command line and the campaign workers ask for them.

=========  ==========================================================================
cupy       CUDA through CuPy on the whole GPU (``times``, ``samples``, ``energy``,
           ``counters``)
driver     CUDA through the driver API in a green context limited to N SMs
           (``sm-sweep``)
opencl     OpenCL through NVIDIA's driver on the GPU
pocl       OpenCL through PoCL on this machine's CPU
replay     recorded rows of a dataset, served through the same measuring API
=========  ==========================================================================

A name of the form ``module:attribute`` builds a backend from any importable class
(used by tests to plug in fakes).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from kerncast._errors import InputError
from kerncast.measure._backend import Backend
from kerncast.measure._registry import BACKEND_KINDS, BackendKind, backend_kind, register_backend

__all__ = ["BACKENDS", "backend_language", "make_backend"]

CPU_DEVICE_NAMES = ("cpu", "host")


def _cupy(device: str | None = None, sm_count: int | None = None, index: int = 0,
          **_: Any) -> Backend:
    if sm_count is not None:  # a green context limits the SMs: the driver API's
        return _driver(device=device, sm_count=sm_count)
    from kerncast.measure._cupy import CupyBackend  # noqa: PLC0415 (CuPy loads on use)

    return CupyBackend(device=device, index=index)


def _driver(device: str | None = None, sm_count: int | None = None, **_: Any) -> Backend:
    from kerncast.measure._driver import DriverBackend  # noqa: PLC0415 (cuda-python on use)

    return DriverBackend(device=device, sm_count=sm_count)


def _nvidia_opencl(device: str | None = None, **_: Any) -> Backend:
    from kerncast.measure._cuda_common import resolve_device_key  # noqa: PLC0415 (on use: CUDA backends only)
    from kerncast.measure._opencl import OpenCLBackend  # noqa: PLC0415 (PyOpenCL on use)

    backend = OpenCLBackend("nvidia")
    if device is not None:
        backend.device_key = resolve_device_key(backend.device.name.strip(), device)
    return backend


def _pocl(device: str | None = None, **_: Any) -> Backend:
    from kerncast.measure._opencl import OpenCLBackend  # noqa: PLC0415 (PyOpenCL on use)

    if device is not None and device.lower() not in CPU_DEVICE_NAMES \
            and not device.startswith("cpu:"):
        raise InputError(f"the pocl backend runs on this machine's CPU, not on {device!r}; "
                         "pass --device cpu (or use --backend cupy/opencl on a GPU)")
    return OpenCLBackend("portable")


def _replay(device: str | None = None, sm_count: int | None = None, dataset: Any = None,
            language: str | None = None) -> Backend:
    from kerncast.measure._replay import ReplayBackend  # noqa: PLC0415 (on use: replay loads pandas)

    if dataset is None:
        raise InputError("--backend replay needs --dataset PATH (a dataset under data/)")
    return ReplayBackend(dataset, device=device, sm_count=sm_count, language=language)


_GPU_ONLY = frozenset({"times", "samples", "samples-full", "cpu"})
for _kind in (
    BackendKind("cupy", "cuda", "gpu", None, "nvml", _cupy,
                "CUDA through CuPy on the whole GPU (times, samples, energy, counters); "
                "with an SM count, the driver backend"),
    BackendKind("driver", "cuda", "gpu", None, "nvml", _driver,
                "CUDA through the driver API in a green context limited to N SMs (sm-sweep)"),
    BackendKind("opencl", "opencl", "gpu", _GPU_ONLY | {"energy"}, "nvml", _nvidia_opencl,
                "OpenCL through NVIDIA's driver on the GPU"),
    BackendKind("pocl", "opencl", "cpu", _GPU_ONLY, "cpu", _pocl,
                "OpenCL through PoCL on this machine's CPU"),
    BackendKind("replay", "cuda", "recorded", frozenset(), "none", _replay,
                "recorded rows of a dataset, served through the same measuring API"),
):
    register_backend(_kind)

BACKENDS = tuple(BACKEND_KINDS)


def backend_language(name: str) -> str:
    """The source language a backend runs (CUDA for a backend named ``module:attr``)."""
    kind = BACKEND_KINDS.get(name)
    return kind.language if kind is not None else "cuda"


def _custom(name: str, **options: Any) -> Backend:
    module, _, attr = name.partition(":")
    try:
        factory = getattr(import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise InputError(f"backend {name!r} cannot be imported ({exc}); choose one of "
                         f"{', '.join(BACKENDS)}") from None
    return factory(**options)


def make_backend(name: str, *, device: str | None = None, sm_count: int | None = None,
                 dataset: Any = None, language: str | None = None, index: int = 0) -> Backend:
    """Create the backend ``name`` for ``device`` (a registered kind, or ``module:attr``
    for any importable factory: tests plug in fakes so); ``index`` picks the GPU of a
    machine with several (``cupy``).

    Raises
    ------
    InputError
        For an unknown backend, a device that does not fit the backend, or a replay
        without a dataset.
    ToolchainError
        When the backend's library or device is missing (the message says what to
        install or which backend to use instead).
    """
    if ":" in name and name.split(":", 1)[0] not in BACKEND_KINDS:
        return _custom(name, device=device, sm_count=sm_count)
    options: dict[str, Any] = {"index": index} if index else {}
    return backend_kind(name).make(device=device, sm_count=sm_count, dataset=dataset,
                                   language=language, **options)

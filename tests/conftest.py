"""Shared test configuration: the ``gpu`` marker skips where no CUDA GPU is usable; the
``pocl`` fixture is a PoCL backend, skipping where PoCL cannot build a kernel here."""

from __future__ import annotations

import functools
import importlib.util

import pytest


@functools.cache
def _gpu_available() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no driver, no device: the GPU tests do not apply
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _gpu_available():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU with CuPy")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@functools.cache
def _pocl_backend():
    """A PoCL backend that has built and run a corpus kernel on this machine, or why not
    (pyopencl missing, or PoCL's compiler rejecting this host: the pyopencl wheel's
    PoCL stops at ``unknown target CPU 'generic'`` on CPUs its LLVM cannot name)."""
    if importlib.util.find_spec("pyopencl") is None:
        return None, "needs pyopencl"
    from kerncast.corpus import get_kernel, make_args
    from kerncast.measure import OpenCLBackend
    from kerncast.measure._job import corpus_job

    kernel = get_kernel("copy_vector")
    config = kernel.launch("small")
    backend = OpenCLBackend("portable")
    try:
        backend.run_once(corpus_job(kernel, config, "opencl"), make_args(kernel, config))
    except Exception as exc:  # noqa: BLE001 (any failure means PoCL does not work here)
        text = str(exc)
        said = [line.strip() for line in text.splitlines() if "error:" in line]
        return None, f"PoCL cannot build kernels on this machine: {(said or [text])[0][:300]}"
    return backend, ""


@pytest.fixture(scope="session")
def pocl():
    backend, why = _pocl_backend()
    if backend is None:
        pytest.skip(why)
    return backend

"""Measurement: run kernels for real and record what happened.

Backends (``Backend``) compile, launch and time; the OpenCL one runs on PoCL CPUs and
NVIDIA GPUs. GPU libraries are imported only when a backend is created.
"""

from kerncast.measure._backend import Backend, Compiled

__all__ = ["Backend", "Compiled", "OpenCLBackend"]


def __getattr__(name: str):
    if name == "OpenCLBackend":
        from kerncast.measure._opencl import OpenCLBackend  # noqa: PLC0415

        return OpenCLBackend
    raise AttributeError(name)

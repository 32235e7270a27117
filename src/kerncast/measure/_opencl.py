"""OpenCL backend through PyOpenCL: PoCL on CPUs, NVIDIA's driver on GPUs."""

from __future__ import annotations

from typing import Any

import numpy as np

from kerncast._errors import InputError, ToolchainError
from kerncast.corpus import CorpusKernel, LaunchConfig
from kerncast.measure._backend import Backend, Compiled

__all__ = ["OpenCLBackend"]

# Clang/PoCL and NVIDIA's compiler both accept OpenCL C 1.2.
BUILD_OPTIONS = ["-cl-std=CL1.2"]


def _import_pyopencl():
    try:
        import pyopencl  # noqa: PLC0415 (optional dependency)
    except ImportError:
        raise ToolchainError(
            "PyOpenCL is not installed; install it with: pip install 'kerncast[opencl]' "
            "(pyopencl with PoCL)"
        ) from None
    return pyopencl


def _pick_device(cl, platform_hint: str):
    platforms = cl.get_platforms()
    for platform in platforms:
        if platform_hint.lower() in platform.name.lower() or platform_hint.lower() in platform.vendor.lower():
            devices = platform.get_devices()
            if devices:
                return devices[0]
    names = ", ".join(p.name for p in platforms) or "none"
    raise ToolchainError(f"no OpenCL platform matches {platform_hint!r} (found: {names}); "
                         "install PoCL (pip install 'pyopencl[pocl]') or point OCL_ICD_VENDORS "
                         "at a vendor ICD")


class OpenCLBackend(Backend):
    """Run corpus kernels through OpenCL.

    Parameters
    ----------
    platform
        A substring of the platform's name or vendor: ``"portable"`` for PoCL,
        ``"nvidia"`` for NVIDIA's driver.
    """

    language = "opencl"

    def __init__(self, platform: str = "portable"):
        cl = _import_pyopencl()
        self._cl = cl
        self.device = _pick_device(cl, platform)
        self.name = f"opencl:{self.device.platform.name}:{self.device.name}"
        self.context = cl.Context([self.device])
        self.queue = cl.CommandQueue(
            self.context, properties=cl.command_queue_properties.PROFILING_ENABLE)
        self._programs: dict[tuple, Any] = {}
        self._kernels: dict[tuple, Any] = {}

    def compile(self, kernel: CorpusKernel, config: LaunchConfig) -> Compiled:
        key = (str(kernel.source_path("opencl")), tuple(sorted(config.defines.items())))
        program = self._programs.get(key)
        if program is None:
            source = kernel.source_path("opencl").read_text()
            options = BUILD_OPTIONS + [f"-D{k}={v}" for k, v in sorted(config.defines.items())]
            try:
                program = self._cl.Program(self.context, source).build(options=options)
            except self._cl.RuntimeError as exc:
                raise InputError(f"OpenCL build of {kernel.source_path('opencl').name} "
                                 f"failed:\n{exc}") from None
            self._programs[key] = program
        handle = self._kernels.get((key, kernel.entry))
        if handle is None:
            handle = self._kernels[(key, kernel.entry)] = self._cl.Kernel(program, kernel.entry)
        return Compiled(kernel, dict(config.defines), handle)

    def upload(self, args: dict[str, Any]) -> dict[str, Any]:
        mf = self._cl.mem_flags
        dev = {}
        for name, value in args.items():
            if isinstance(value, np.ndarray):
                dev[name] = self._cl.Buffer(self.context, mf.READ_WRITE | mf.COPY_HOST_PTR,
                                            hostbuf=value)
            else:
                dev[name] = value
        return dev

    def launch(self, compiled: Compiled, config: LaunchConfig, dev_args: dict[str, Any]) -> Any:
        local = tuple(config.block)
        global_size = tuple(g * b for g, b in zip(config.grid, config.block))
        args = self.ordered(compiled.kernel, dev_args)
        return compiled.handle(self.queue, global_size, local, *args)

    def synchronize(self) -> None:
        self.queue.finish()

    def download(self, dev_args: dict[str, Any], templates: dict[str, np.ndarray]) -> dict:
        outs = {}
        for name, template in templates.items():
            host = np.empty_like(template)
            self._cl.enqueue_copy(self.queue, host, dev_args[name])
            outs[name] = host
        self.synchronize()
        return outs

"""OpenCL backend through PyOpenCL: PoCL on CPUs, NVIDIA's driver on GPUs.

Launches are timed by OpenCL profiling events (the command's own start and end on
the device), so host gaps never enter the interval.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from importlib.metadata import version

import numpy as np

from kerncast._errors import ToolchainError
from kerncast.core import Kernel, Launch
from kerncast.measure._backend import Backend, CompileError, Compiled, DeviceMemoryError, Resources
from kerncast.measure._provenance import host_cpu_key
from kerncast.devices import get_device

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


def _available_ram() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


class OpenCLBackend(Backend):
    """Run corpus kernels through OpenCL.

    Parameters
    ----------
    platform
        A substring of the platform's name or vendor: ``"portable"`` for PoCL,
        ``"nvidia"`` for NVIDIA's driver.
    device_key
        The device's key for the rows (a spec key for GPUs; ``cpu:<model>`` for CPUs);
        by default resolved from the device's name, or the host CPU's key.
    """

    language = "opencl"
    block_offsets = True

    def __init__(self, platform: str = "portable", device_key: str | None = None):
        cl = _import_pyopencl()
        self._cl = cl
        self.device = _pick_device(cl, platform)
        self.kind = "cpu" if self.device.type & cl.device_type.CPU else "gpu"
        self.name = "pocl" if "portable" in self.device.platform.name.lower() else "opencl"
        self.device_key = device_key or self._default_key()
        self.sm_count = int(self.device.max_compute_units)
        self.l2_bytes = self._cache_bytes()
        self.max_buffer_bytes = int(self.device.max_mem_alloc_size)
        self.context = cl.Context([self.device])
        self.queue = cl.CommandQueue(
            self.context, properties=cl.command_queue_properties.PROFILING_ENABLE)
        self._programs: dict[tuple, Any] = {}
        self._kernels: dict[tuple, Any] = {}
        self._scratch = None
        #: the work-item offset of the launches (``global_work_offset``): a slice of a grid
        self.global_offset: tuple[int, ...] | None = None

    def _default_key(self) -> str:
        if self.kind == "cpu":
            return host_cpu_key()

        return get_device(self.device.name.strip()).key

    def _cache_bytes(self) -> int:
        if self.kind == "gpu":
            try:
                return int(get_device(self.device_key).memory.l2_kib * 1024)
            except Exception:  # noqa: BLE001 (fall back to what OpenCL reports)
                pass
        return int(self.device.global_mem_cache_size)

    def compile(self, kernel: Kernel) -> Compiled:
        source = kernel.source
        key = (source, tuple(sorted(kernel.defines.items())), kernel.options)
        program = self._programs.get(key)
        if program is None:
            options = BUILD_OPTIONS + [f"-D{k}={v}" for k, v in sorted(kernel.defines.items())] \
                + list(kernel.options) + [f"-I{d}" for d in kernel.include_dirs]
            if kernel.path is not None:
                options.append(f"-I{kernel.path.parent}")
            try:
                program = self._cl.Program(self.context, source).build(options=options)
            except self._cl.Error as exc:
                raise CompileError(f"OpenCL build of {kernel.display} failed: {exc}") from None
            self._programs[key] = program
        handle = self._kernels.get((key, kernel.name))
        if handle is None:
            handle = self._kernels[(key, kernel.name)] = self._cl.Kernel(program, kernel.name)
        return Compiled(kernel, dict(kernel.defines), handle, self._resources(handle))

    def _resources(self, handle) -> Resources:
        info = self._cl.kernel_work_group_info
        try:
            return Resources(
                registers=None,
                static_shared=int(handle.get_work_group_info(info.LOCAL_MEM_SIZE, self.device)),
                local_bytes=int(handle.get_work_group_info(info.PRIVATE_MEM_SIZE, self.device)),
                max_threads_per_block=int(handle.get_work_group_info(info.WORK_GROUP_SIZE,
                                                                     self.device)))
        except self._cl.Error:
            return Resources()

    def upload(self, args: dict[str, Any]) -> dict[str, Any]:
        mf = self._cl.mem_flags
        dev = {}
        for name, value in args.items():
            if isinstance(value, np.ndarray):
                try:
                    dev[name] = self._cl.Buffer(self.context, mf.READ_WRITE | mf.COPY_HOST_PTR,
                                                hostbuf=np.ascontiguousarray(value))
                except self._cl.Error as exc:  # out of memory, or over the largest buffer
                    raise DeviceMemoryError(
                        f"OpenCL could not allocate {name} ({value.nbytes:,} bytes) on "
                        f"{self.device.name.strip()}, whose largest buffer is "
                        f"{self.max_buffer_bytes:,} bytes ({exc}); give a smaller size"
                    ) from None
            else:
                dev[name] = value
        return dev

    def launch(self, compiled: Compiled, config: Launch, dev_args: dict[str, Any]) -> Any:
        local = tuple(config.block)
        global_size = tuple(g * b for g, b in zip(config.grid, config.block))
        args = self.ordered(config, dev_args)
        return compiled.handle(self.queue, global_size, local, *args,
                               global_offset=self.global_offset)

    def synchronize(self) -> None:
        self.queue.finish()

    def download(self, dev_args: dict[str, Any], templates: dict[str, np.ndarray]) -> dict:
        outs = {}
        for name, template in templates.items():
            host = np.empty(template.shape, template.dtype)
            self._cl.enqueue_copy(self.queue, host, dev_args[name])
            outs[name] = host
        self.synchronize()
        return outs

    def write(self, dev: Any, host: np.ndarray) -> None:
        self._cl.enqueue_copy(self.queue, dev, np.ascontiguousarray(host))

    def copy(self, dst: Any, src: Any) -> None:
        self._cl.enqueue_copy(self.queue, dst, src)

    def free(self, dev_args: dict[str, Any]) -> None:
        for value in dev_args.values():
            if isinstance(value, self._cl.Buffer):
                value.release()

    def memory_info(self) -> tuple[int, int]:
        total = int(self.device.global_mem_size)
        free = min(total, _available_ram()) if self.kind == "cpu" else total
        return free, total

    def time_launch(self, compiled: Compiled, config: Launch, dev_args: dict[str, Any],
                    before: Callable[[], None] | None = None) -> float:
        if before is not None:
            before()
        event = self.launch(compiled, config, dev_args)
        event.wait()
        return (event.profile.end - event.profile.start) * 1e-9

    def flush_l2(self, writes: bool | None = None) -> None:
        if self._scratch is None:
            size = max(4, 2 * self.l2_bytes) // 4 * 4
            self._scratch = self._cl.Buffer(self.context, self._cl.mem_flags.READ_WRITE, size)
        self._cl.enqueue_fill_buffer(self.queue, self._scratch, np.uint32(0x5A5A5A5A), 0,
                                     self._scratch.size)

    def describe(self) -> dict[str, Any]:
        try:
            pyopencl_version = version("pyopencl")
        except Exception:  # noqa: BLE001
            pyopencl_version = ""
        return {"device_name": self.device.name.strip(),
                "driver_version": self.device.driver_version.strip(),
                "runtime_version": self.device.platform.version.strip(),
                "backend": self.name,
                "tool_versions": {"pyopencl": pyopencl_version,
                                  "opencl_platform": self.device.platform.name.strip()}}

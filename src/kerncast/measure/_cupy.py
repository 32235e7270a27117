"""CUDA backend through CuPy: NVRTC compiles, device buffers, CUDA-event timing.

Kernels are compiled by NVRTC with ``("-std=c++17", "-DNAME=VALUE", ...)`` into a
cubin shared with the driver-API backend (:mod:`kerncast.measure._nvrtc`, cached on
disk, loaded with ``cupy.RawModule(path=...)``); without cuda.bindings or nvcc,
``cupy.RawModule(code=source, options=...)`` compiles instead. One module per source
and define set; the function's attributes give its registers, static shared memory
and local memory.
Launches go on a non-blocking stream. One timed launch is::

    [before: restore inout buffers / flush L2]  kc_spin (~50 µs)  start  KERNEL  stop

so the start event is recorded while the GPU is still busy-waiting and the host's
launch gap never enters the interval.
"""

from __future__ import annotations

import hashlib
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from kerncast.core import Kernel, Launch
from kerncast.corpus import CorpusKernel
from kerncast.measure._backend import (
    Backend,
    CompileError,
    Compiled,
    DeviceMemoryError,
    LaunchError,
    Resources,
)
from kerncast.measure._cuda_common import (
    HELPERS_SOURCE,
    PaidTiming,
    flush_launch,
    no_cuda,
    find_function,
    nvrtc_options,
    resolve_device_key,
    spin_cycles,
)
from kerncast.devices import get_device
from kerncast._errors import ToolchainError
from kerncast.measure._nvrtc import cubin_file
from kerncast.measure._compare import device_output_problems
from kerncast.measure._nvml import try_nvml

__all__ = ["CupyBackend"]


def _import_cupy():
    try:
        import cupy  # noqa: PLC0415 (optional dependency)
    except ImportError:
        raise no_cuda("CuPy is not installed (pip install cupy-cuda13x, or 'kerncast[cuda]')") \
            from None
    return cupy


def _grid3(dims: tuple[int, ...]) -> tuple[int, int, int]:
    return tuple((list(dims) + [1, 1, 1])[:3])  # type: ignore[return-value]


def _attribute(func: Any, name: str) -> int | None:
    try:
        value = getattr(func, name)
    except Exception:  # noqa: BLE001 (older CuPy: attribute missing)
        return None
    return int(value) if value is not None else None


class CupyBackend(PaidTiming, Backend):
    """Run corpus kernels through CuPy on the whole GPU.

    Parameters
    ----------
    device
        The device the user named (checked against the GPU found); ``None`` accepts
        whatever GPU is there, provided it has a spec.
    index
        CUDA device index.
    spin_us
        Length of the busy-wait queued ahead of each timed launch.
    """

    name = "cupy"
    language = "cuda"
    block_offsets = True
    kind = "gpu"

    def __init__(self, device: str | None = None, index: int = 0, spin_us: float = 50.0):
        cp = _import_cupy()
        self._cp = cp
        try:
            count = cp.cuda.runtime.getDeviceCount()
        except Exception as exc:  # noqa: BLE001 (CUDARuntimeError without a driver)
            raise no_cuda(f"no CUDA GPU is usable ({exc})") from None
        if count <= index:
            raise no_cuda(f"no CUDA GPU with index {index} (found {count})")
        self._device = cp.cuda.Device(index)
        self._device.use()
        props = cp.cuda.runtime.getDeviceProperties(index)
        self.device_name = props["name"].decode() if isinstance(props["name"], bytes) \
            else str(props["name"])
        self.device_key = resolve_device_key(self.device_name, device)
        self.sm_count = int(props["multiProcessorCount"])
        self.l2_bytes = int(props["l2CacheSize"])
        self.arch = f"sm_{props['major']}{props['minor']}"
        try:
            self.pci_bus_id = self._device.pci_bus_id
        except Exception:  # noqa: BLE001 (only used to find the GPU in NVML)
            self.pci_bus_id = None
        self.stream = cp.cuda.Stream(non_blocking=True)
        self._start, self._stop = cp.cuda.Event(), cp.cuda.Event()
        self._modules: dict[tuple, Any] = {}
        self._helpers = None
        self._flush_buffer = None

        self._spin = spin_cycles(get_device(self.device_key).compute.boost_clock_mhz, spin_us)

    # -- compile --------------------------------------------------------------------------
    def compile(self, kernel: Kernel) -> Compiled:
        options = () if kernel.language == "ptx" else nvrtc_options(kernel)
        text = kernel.source
        key = (text, options)
        try:
            module = self._modules.get(key) or self._module(text, options, kernel)
            func = find_function(module.get_function, kernel)  # CuPy compiles here or loads
            self._modules[key] = module
        except CompileError:
            raise
        except Exception as exc:  # noqa: BLE001 (CompileException, NVRTCError, CUDADriverError)
            raise CompileError(f"NVRTC build of {kernel.display} with {' '.join(options)} "
                               f"failed: {exc}") from None
        resources = Resources(
            registers=_attribute(func, "num_regs"),
            static_shared=_attribute(func, "shared_size_bytes"),
            local_bytes=_attribute(func, "local_size_bytes"),
            max_threads_per_block=_attribute(func, "max_threads_per_block"))
        return Compiled(kernel, dict(kernel.defines), func, resources)

    def _module(self, text: str, options: tuple[str, ...], kernel: Kernel):
        """The kernel's module: PTX loaded as it is (the driver compiles it), the shared
        NVRTC cubin, or CuPy's own NVRTC run without one."""
        name = kernel.display
        if kernel.language == "ptx":
            ptx = Path(tempfile.gettempdir()) / \
                f"kerncast-{hashlib.sha256(text.encode()).hexdigest()[:16]}.ptx"
            ptx.write_text(text)
            return self._cp.RawModule(path=str(ptx))
        try:
            cubin = cubin_file(text, options, self.arch, Path(name).name)
        except ToolchainError:
            return self._cp.RawModule(code=text, options=options)
        return self._cp.RawModule(path=str(cubin))

    def helpers(self):
        """The module with ``kc_spin``, ``kc_flush``, ``kc_flush_clean`` and ``kc_empty``."""
        if self._helpers is None:
            self._helpers = self._cp.RawModule(code=HELPERS_SOURCE, options=("-std=c++17",))
        return self._helpers

    # -- buffers --------------------------------------------------------------------------
    def upload(self, args: dict[str, Any]) -> dict[str, Any]:
        cp = self._cp
        dev = {}
        try:
            for name, value in args.items():
                if isinstance(value, np.ndarray):
                    buf = cp.empty(value.shape, value.dtype)
                    buf.set(np.ascontiguousarray(value), stream=self.stream)
                    dev[name] = buf
                else:
                    dev[name] = value
        except cp.cuda.memory.OutOfMemoryError as exc:
            raise DeviceMemoryError(str(exc)) from None
        return dev

    def download(self, dev_args: dict[str, Any], templates: dict[str, np.ndarray]) -> dict:
        outs = {name: dev_args[name].get(stream=self.stream) for name in templates}
        self.synchronize()
        return {name: np.asarray(v).reshape(templates[name].shape) for name, v in outs.items()}

    def write(self, dev: Any, host: np.ndarray) -> None:
        dev.set(np.ascontiguousarray(host), stream=self.stream)

    def duplicate(self, dev: Any) -> Any:
        """A new device buffer with the contents of ``dev`` (a device-to-device copy)."""
        try:
            out = self._cp.empty_like(dev)
        except self._cp.cuda.memory.OutOfMemoryError as exc:
            raise DeviceMemoryError(str(exc)) from None
        self.copy(out, dev)
        return out

    def cached_upload(self, key: tuple, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
        """Device copies kept between calls with the same ``key`` (read-only buffers that
        several configurations share); the cache holds one (kernel, size) at a time."""
        unit = key[:2]
        if getattr(self, "_cache_unit", None) != unit:
            self._cache, self._cache_unit = {}, unit
        missing = {n: a for n, a in arrays.items() if (key, n) not in self._cache}
        for name, buf in self.upload(missing).items():
            self._cache[(key, name)] = buf
        return {n: self._cache[(key, n)] for n in arrays}

    def output_problems(self, kernel: CorpusKernel, dev_args: dict[str, Any],
                        want: dict[str, np.ndarray], key: tuple) -> list[str]:
        """The checks of ``kerncast.measure._run.output_problems``, done on the device."""
        expected = self.cached_upload(key[:4] + (key[5], "expected"), want)
        return device_output_problems(self._cp, kernel, dev_args, expected)

    def copy(self, dst: Any, src: Any) -> None:
        rt = self._cp.cuda.runtime
        rt.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes, rt.memcpyDeviceToDevice,
                       self.stream.ptr)

    def free(self, dev_args: dict[str, Any]) -> None:
        dev_args.clear()

    def memory_info(self) -> tuple[int, int]:
        self.synchronize()
        self._cp.get_default_memory_pool().free_all_blocks()
        free, total = self._cp.cuda.runtime.memGetInfo()
        return int(free), int(total)

    # -- launch and time ------------------------------------------------------------------
    def offset(self, dev: Any, byte_offset: int) -> Any:
        return dev.view(self._cp.uint8)[byte_offset:]

    def launch(self, compiled: Compiled, config: Launch, dev_args: dict[str, Any]) -> None:
        try:
            compiled.handle(_grid3(config.grid), _grid3(config.block),
                            tuple(self.ordered(config, dev_args)),
                            shared_mem=config.dynamic_shared, stream=self.stream)
        except Exception as exc:  # noqa: BLE001 (CUDADriverError and friends)
            raise LaunchError(f"launch failed: {exc}") from None

    def activate(self) -> None:
        self._device.use()

    def synchronize(self) -> None:
        try:
            self.stream.synchronize()
        except Exception as exc:  # noqa: BLE001
            raise LaunchError(f"the stream failed: {exc}") from None

    def spin(self) -> None:
        """Queue the busy-wait kernel."""
        self.helpers().get_function("kc_spin")((1, 1, 1), (1, 1, 1), (np.int64(self._spin),),
                                               stream=self.stream)

    def time_launch(self, compiled: Compiled, config: Launch, dev_args: dict[str, Any],
                    before: Callable[[], None] | None = None) -> float:
        return self._timed(lambda: self.launch(compiled, config, dev_args), before)

    def _timed(self, enqueue: Callable[[], None], before: Callable[[], None] | None) -> float:
        """Seconds of the work ``enqueue`` queues, between events after the busy-wait."""
        if before is not None:
            before()
        self.spin()
        self._start.record(self.stream)
        enqueue()
        self._stop.record(self.stream)
        try:
            self._stop.synchronize()
            return self._cp.cuda.get_elapsed_time(self._start, self._stop) * 1e-3
        except Exception as exc:  # noqa: BLE001
            raise LaunchError(f"the kernel failed: {exc}") from None

    def time_empty(self, spin: bool = True) -> float:
        """Seconds of an empty kernel (the event-timing floor), with or without the spin."""
        if spin:
            self.spin()
        self._start.record(self.stream)
        self.helpers().get_function("kc_empty")((1, 1, 1), (1, 1, 1), (), stream=self.stream)
        self._stop.record(self.stream)
        self._stop.synchronize()
        return self._cp.cuda.get_elapsed_time(self._start, self._stop) * 1e-3

    def flush_l2(self, writes: bool | None = None) -> None:
        cp = self._cp
        if self._flush_buffer is None:
            self._flush_buffer = cp.zeros(max(1, 2 * self.l2_bytes // 4), dtype=cp.uint32)
        n = self._flush_buffer.size
        name, args = flush_launch(self.flush_writes if writes is None else writes,
                                  self._flush_buffer, n)
        self.helpers().get_function(name)((math.ceil(n / 256), 1, 1), (256, 1, 1), args,
                                          stream=self.stream)

    def _launch_graph(self, compiled: Compiled, config: Launch, dev_args: dict[str, Any],
                      count: int) -> int:
        batch = min(count, 500)
        self.stream.begin_capture()
        try:
            for _ in range(batch):
                self.launch(compiled, config, dev_args)
        finally:
            graph = self.stream.end_capture()
        loops = math.ceil(count / batch)
        for _ in range(loops):
            graph.launch(self.stream)
        self.synchronize()
        return loops * batch

    def launch_many(self, compiled: Compiled, config: Launch, dev_args: dict[str, Any],
                    count: int) -> int:
        """Launch ``count`` times (replaying a captured CUDA graph where CuPy can)."""
        try:
            return self._launch_graph(compiled, config, dev_args, count)
        except LaunchError:
            raise
        except Exception:  # noqa: BLE001 (no graph support: plain launches)
            try:
                if self.stream.is_capturing():
                    self.stream.end_capture()
            except Exception:  # noqa: BLE001
                pass
        for _ in range(count):
            self.launch(compiled, config, dev_args)
        self.synchronize()
        return count

    def describe(self) -> dict[str, Any]:
        rt = self._cp.cuda.runtime
        version = int(rt.driverGetVersion())
        nvml = try_nvml(self.pci_bus_id)
        tools = {"cupy": self._cp.__version__, "cuda_runtime": str(rt.runtimeGetVersion()),
                 "gpu_pci_bus_id": self.pci_bus_id or ""}
        try:
            major, minor = self._cp.cuda.nvrtc.getVersion()
            tools["nvrtc"] = f"{major}.{minor}"
        except Exception:  # noqa: BLE001
            pass
        return {"device_name": self.device_name,
                "driver_version": nvml.driver_version() if nvml else str(version),
                "runtime_version": f"{version // 1000}.{version % 1000 // 10}",
                "backend": self.name, "tool_versions": tools}

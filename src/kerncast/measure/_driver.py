"""CUDA driver-API backend (cuda.bindings): runs limited to N SMs by a green context.

A green context owns a partition of the GPU's SMs::

    cuDeviceGetDevResource(dev, SM)            every SM of the device
    cuDevSmResourceSplitByCount(1, all, 0, N)  one group of (at least) N SMs
    cuDevResourceGenerateDesc([group], 1)
    cuGreenCtxCreate(desc, dev, DEFAULT_STREAM)
    cuCtxFromGreenCtx -> cuCtxSetCurrent       a CUcontext on that partition
    cuGreenCtxStreamCreate(green, NON_BLOCKING, 0)

Kernels launched on the green stream run on the partition's SMs only. Everything
else goes through the driver API in that context: the NVRTC-compiled cubin is loaded
with ``cuModuleLoadData``, buffers come from ``cuMemAlloc``, launches from
``cuLaunchKernel`` and the interval from two ``cuEvent``s, with the same busy-wait
kernel queued ahead of the start event as in :class:`~kerncast.measure.CupyBackend`.
Asking for every SM uses the whole SM resource unsplit (so the same path can be
compared with CuPy at full size). The granted count (``sm_count``) can exceed the
request where the hardware allocates SMs in groups.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kerncast._errors import KerncastError
from kerncast.core import Kernel, Launch
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
from kerncast.measure._nvrtc import compile_cubin, nvrtc_version
from kerncast.measure._nvml import try_nvml

__all__ = ["DeviceBuffer", "DriverBackend", "DriverError", "GreenContext", "import_driver"]

GRAPH_BATCH = 500  # launches per captured graph in launch_many (as CupyBackend)


class DriverError(KerncastError):
    """A CUDA driver call failed."""

    def __init__(self, call: str, code: Any, name: str):
        super().__init__(f"{call} failed: {name}")
        self.call, self.code, self.name = call, code, name


def import_driver():
    """``cuda.bindings.driver``, or a one-line error naming what to install."""
    try:
        from cuda.bindings import driver  # noqa: PLC0415 (optional dependency)
    except ImportError:
        raise no_cuda("cuda-bindings is not installed (pip install cuda-bindings, or "
                      "'kerncast[cuda]')") from None
    return driver


class _Calls:
    """Call driver functions by name, raising :class:`DriverError` on failure."""

    def __init__(self, cu):
        self.cu = cu

    def __call__(self, name: str, *args):
        result = getattr(self.cu, name)(*args)
        err = result[0]
        if err != self.cu.CUresult.CUDA_SUCCESS:
            raise DriverError(name, err, self.error_name(err))
        if len(result) == 1:
            return None
        return result[1] if len(result) == 2 else result[1:]

    def error_name(self, err) -> str:
        try:
            found = self.cu.cuGetErrorName(err)
            return found[1].decode() if isinstance(found[1], bytes) else str(found[1])
        except Exception:  # noqa: BLE001
            return str(err)


@dataclass
class GreenContext:
    """A context restricted to ``granted`` SMs, with its stream."""

    green: Any
    context: Any
    stream: Any
    requested: int
    granted: int
    total: int

    @classmethod
    def create(cls, call: _Calls, device: Any, sm_count: int) -> GreenContext:
        cu = call.cu
        everything = call("cuDeviceGetDevResource", device, cu.CUdevResourceType.CU_DEV_RESOURCE_TYPE_SM)
        total = int(everything.sm.smCount)
        if sm_count >= total:
            part = everything
        else:
            groups, _count, _rest = call("cuDevSmResourceSplitByCount", 1, everything, 0, int(sm_count))
            part = groups[0]
        desc = call("cuDevResourceGenerateDesc", [part], 1)
        green = call("cuGreenCtxCreate", desc, device,
                     cu.CUgreenCtxCreate_flags.CU_GREEN_CTX_DEFAULT_STREAM)
        context = call("cuCtxFromGreenCtx", green)
        call("cuCtxSetCurrent", context)
        stream = call("cuGreenCtxStreamCreate", green, cu.CUstream_flags.CU_STREAM_NON_BLOCKING, 0)
        return cls(green, context, stream, int(sm_count), int(part.sm.smCount), total)

    def destroy(self, call: _Calls) -> None:
        call("cuStreamDestroy", self.stream)
        call("cuGreenCtxDestroy", self.green)


@dataclass
class DeviceBuffer:
    """A ``cuMemAlloc`` allocation holding one argument, or (``view``) a pointer
    ``byte_offset`` bytes into one, which a view argument passes and nothing frees."""

    ptr: Any
    nbytes: int
    dtype: np.dtype
    shape: tuple[int, ...]
    byte_offset: int = 0
    view: bool = False

    @property
    def address(self) -> int:
        return int(self.ptr) + self.byte_offset


class DriverBackend(PaidTiming, Backend):
    """Run corpus kernels through the driver API, optionally on a subset of the SMs.

    Parameters
    ----------
    device
        The device the user named (checked against the GPU found).
    sm_count
        SMs to run on; ``None`` or the device's count for all of them.
    index
        CUDA device index.
    green
        Use a green context (``False``: the primary context, for comparison).
    """

    name = "driver"
    language = "cuda"
    block_offsets = True
    kind = "gpu"

    def __init__(self, device: str | None = None, sm_count: int | None = None, index: int = 0,
                 spin_us: float = 50.0, green: bool = True):
        cu = import_driver()
        self._call = call = _Calls(cu)
        self._cu = cu
        try:
            call("cuInit", 0)
            self._dev = call("cuDeviceGet", index)
        except (DriverError, RuntimeError) as exc:
            raise no_cuda(f"no CUDA GPU is usable ({exc})") from None
        raw = call("cuDeviceGetName", 256, self._dev)
        self.device_name = (raw.decode() if isinstance(raw, bytes) else str(raw)).split("\0")[0].strip()
        self.device_key = resolve_device_key(self.device_name, device)
        self.pci_bus_id = self._bus_id()
        attr = cu.CUdevice_attribute
        self._total_sms = call("cuDeviceGetAttribute",
                               attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, self._dev)
        self.l2_bytes = int(call("cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, self._dev))
        major = call("cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self._dev)
        minor = call("cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self._dev)
        self.arch = f"sm_{major}{minor}"
        self._previous = call("cuCtxGetCurrent")  # put back by close()
        self._primary = call("cuDevicePrimaryCtxRetain", self._dev)
        self.green: GreenContext | None = None
        if green:
            self.green = GreenContext.create(call, self._dev, sm_count or self._total_sms)
            self.context, self.stream = self.green.context, self.green.stream
            self.sm_count = self.green.granted
        else:
            self.context = self._primary
            call("cuCtxSetCurrent", self.context)
            self.stream = call("cuStreamCreate", cu.CUstream_flags.CU_STREAM_NON_BLOCKING)
            self.sm_count = int(self._total_sms)
        self.sm_count_requested = int(sm_count or self._total_sms)
        self._start = call("cuEventCreate", 0)
        self._stop = call("cuEventCreate", 0)
        self._modules: dict[tuple, Any] = {}
        self._helpers: dict[str, Any] | None = None
        self._flush: DeviceBuffer | None = None
        self._held: list[Any] = []

        self._spin = spin_cycles(get_device(self.device_key).compute.boost_clock_mhz, spin_us)

    def _current(self) -> None:
        self._call("cuCtxSetCurrent", self.context)

    def activate(self) -> None:
        """Make this backend's context current: launches, events and copies go to its
        stream without setting it, so a process keeping several must switch first."""
        self._current()

    def deactivate(self) -> None:
        """Put back the context that was current when this backend was made, as
        :meth:`close` does, but keep everything alive for later items."""
        self._call("cuCtxSetCurrent", self._before())

    def _before(self) -> Any:
        """The context that was current when this backend was made, or none."""
        if self._previous is not None and int(self._previous or 0):
            return self._previous
        return self._cu.CUcontext(0)

    # -- compile --------------------------------------------------------------------------
    def _load(self, source: str, options: tuple[str, ...], name: str) -> Any:
        key = (hash(source), options)
        module = self._modules.get(key)
        if module is None:
            image = compile_cubin(source, options, self.arch, name)
            self._current()
            try:
                module = self._call("cuModuleLoadData", np.frombuffer(image, dtype=np.uint8).copy())
            except DriverError as exc:
                raise CompileError(f"loading the cubin of {name} failed: {exc}") from None
            self._modules[key] = module
        return module

    def _function(self, module: Any, entry: str) -> Any:
        try:
            return self._call("cuModuleGetFunction", module, entry.encode())
        except DriverError as exc:
            raise CompileError(f"no kernel {entry!r} in the module: {exc}") from None

    def _resources(self, func: Any) -> Resources:
        fa = self._cu.CUfunction_attribute

        def get(attr) -> int | None:
            try:
                return int(self._call("cuFuncGetAttribute", attr, func))
            except DriverError:
                return None

        return Resources(registers=get(fa.CU_FUNC_ATTRIBUTE_NUM_REGS),
                         static_shared=get(fa.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
                         local_bytes=get(fa.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
                         max_threads_per_block=get(fa.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK))

    def compile(self, kernel: Kernel) -> Compiled:
        module = self._load(kernel.source, nvrtc_options(kernel), Path(kernel.display).name)
        func = find_function(lambda name: self._function(module, name), kernel)
        return Compiled(kernel, dict(kernel.defines), func, self._resources(func))

    def helper(self, name: str) -> Any:
        """``kc_spin``, ``kc_flush``, ``kc_flush_clean`` or ``kc_empty`` in this context."""
        if self._helpers is None:
            module = self._load(HELPERS_SOURCE, ("-std=c++17",), "kerncast_helpers.cu")
            self._helpers = {n: self._function(module, n)
                             for n in ("kc_spin", "kc_flush", "kc_flush_clean", "kc_empty")}
        return self._helpers[name]

    # -- buffers --------------------------------------------------------------------------
    def _alloc(self, nbytes: int, dtype, shape) -> DeviceBuffer:
        self._current()
        try:
            ptr = self._call("cuMemAlloc", max(1, int(nbytes)))
        except DriverError as exc:
            if exc.name.endswith("OUT_OF_MEMORY"):
                raise DeviceMemoryError(f"cuMemAlloc of {nbytes} bytes: {exc}") from None
            raise LaunchError(str(exc)) from None
        return DeviceBuffer(ptr, int(nbytes), np.dtype(dtype), tuple(shape))

    def upload(self, args: dict[str, Any]) -> dict[str, Any]:
        dev: dict[str, Any] = {}
        try:
            for name, value in args.items():
                if isinstance(value, np.ndarray):
                    host = np.ascontiguousarray(value)
                    buf = self._alloc(host.nbytes, host.dtype, host.shape)
                    dev[name] = buf
                    if host.nbytes:
                        self._call("cuMemcpyHtoD", buf.ptr, host.ctypes.data, host.nbytes)
                else:
                    dev[name] = value
        except DriverError as exc:
            self.free(dev)
            raise LaunchError(str(exc)) from None
        except DeviceMemoryError:
            self.free(dev)
            raise
        return dev

    def download(self, dev_args: dict[str, Any], templates: dict[str, np.ndarray]) -> dict:
        self.synchronize()
        outs = {}
        for name, template in templates.items():
            buf = dev_args[name]
            host = np.empty(buf.shape, buf.dtype)
            if buf.nbytes:
                self._call("cuMemcpyDtoH", host.ctypes.data, buf.ptr, buf.nbytes)
            outs[name] = host.reshape(template.shape)
        return outs

    def write(self, dev: DeviceBuffer, host: np.ndarray) -> None:
        host = np.ascontiguousarray(host)
        self._call("cuMemcpyHtoDAsync", dev.ptr, host.ctypes.data, host.nbytes, self.stream)
        self.synchronize()

    def copy(self, dst: DeviceBuffer, src: DeviceBuffer) -> None:
        self._call("cuMemcpyDtoDAsync", dst.ptr, src.ptr, src.nbytes, self.stream)

    def offset(self, dev: DeviceBuffer, byte_offset: int) -> DeviceBuffer:
        """A pointer ``byte_offset`` bytes into ``dev`` (a view argument): passed to the
        kernel by address, never freed (its allocation is ``dev``'s)."""
        rest = max(dev.nbytes - int(byte_offset), 0)
        return DeviceBuffer(dev.ptr, rest, np.dtype(np.uint8), (rest,),
                            dev.byte_offset + int(byte_offset), view=True)

    def free(self, dev_args: dict[str, Any]) -> None:
        self._current()
        for value in dev_args.values():
            if isinstance(value, DeviceBuffer) and not value.view:
                try:
                    self._call("cuMemFree", value.ptr)
                except DriverError:
                    pass
        dev_args.clear()

    def memory_info(self) -> tuple[int, int]:
        self._current()
        free, total = self._call("cuMemGetInfo")
        return int(free), int(total)

    # -- launch and time ------------------------------------------------------------------
    def _params(self, values: list[Any]) -> int:
        holders = []
        for value in values:
            if isinstance(value, DeviceBuffer):
                holders.append(np.array([value.address], dtype=np.uint64))
            else:
                holders.append(np.array([value], dtype=np.asarray(value).dtype))
        pointers = np.array([h.ctypes.data for h in holders], dtype=np.uint64)
        self._held = [holders, pointers]  # alive until the launch call has read them
        return int(pointers.ctypes.data) if len(values) else 0

    def _launch(self, func: Any, grid, block, shared: int, values: list[Any]) -> None:
        g = (list(grid) + [1, 1, 1])[:3]
        b = (list(block) + [1, 1, 1])[:3]
        try:
            self._call("cuLaunchKernel", func, *g, *b, int(shared), self.stream,
                       self._params(values), 0)
        except DriverError as exc:
            raise LaunchError(f"launch failed: {exc}") from None

    def launch(self, compiled: Compiled, config: Launch, dev_args: dict[str, Any]) -> None:
        self._launch(compiled.handle, config.grid, config.block, config.dynamic_shared,
                     self.ordered(config, dev_args))

    def launch_many(self, compiled: Compiled, config: Launch, dev_args: dict[str, Any],
                    count: int) -> int:
        """Launch ``count`` times by replaying a captured CUDA graph of up to
        :data:`GRAPH_BATCH` launches, so that the host's launch rate (tens of microseconds
        a launch through these bindings) leaves no gaps between short kernels; plain
        launches where the graph cannot be captured. Returns the launches made."""
        try:
            return self._launch_graph(compiled, config, dev_args, count)
        except LaunchError:
            raise
        except DriverError:
            self._end_capture()
        return super().launch_many(compiled, config, dev_args, count)

    def _launch_graph(self, compiled: Compiled, config: Launch, dev_args: dict[str, Any],
                      count: int) -> int:
        cu, call = self._cu, self._call
        batch = max(1, min(count, GRAPH_BATCH))
        self._current()
        call("cuStreamBeginCapture", self.stream,
             cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        try:
            for _ in range(batch):
                self.launch(compiled, config, dev_args)
        finally:
            graph = call("cuStreamEndCapture", self.stream)
        try:
            instantiate = ("cuGraphInstantiateWithFlags" if hasattr(cu, "cuGraphInstantiateWithFlags")
                           else "cuGraphInstantiate")
            replay = call(instantiate, graph, 0)
            try:
                loops = math.ceil(count / batch)
                for _ in range(loops):
                    call("cuGraphLaunch", replay, self.stream)
                self.synchronize()
            finally:
                call("cuGraphExecDestroy", replay)
        finally:
            call("cuGraphDestroy", graph)
        return loops * batch

    def _end_capture(self) -> None:
        """End a capture a failed graph left open on the stream (nothing if none is)."""
        try:
            capturing = self._call("cuStreamIsCapturing", self.stream)
            if capturing != self._cu.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE:
                graph = self._call("cuStreamEndCapture", self.stream)
                self._call("cuGraphDestroy", graph)
        except DriverError:
            pass

    def synchronize(self) -> None:
        try:
            self._call("cuStreamSynchronize", self.stream)
        except DriverError as exc:
            raise LaunchError(f"the stream failed: {exc}") from None

    def spin(self) -> None:
        self._launch(self.helper("kc_spin"), (1,), (1,), 0, [np.int64(self._spin)])

    def time_launch(self, compiled: Compiled, config: Launch, dev_args: dict[str, Any],
                    before: Callable[[], None] | None = None) -> float:
        return self._timed(lambda: self.launch(compiled, config, dev_args), before)

    def _timed(self, enqueue: Callable[[], None], before: Callable[[], None] | None) -> float:
        """Seconds of the work ``enqueue`` queues, between events after the busy-wait."""
        if before is not None:
            before()
        self.spin()
        self._call("cuEventRecord", self._start, self.stream)
        enqueue()
        self._call("cuEventRecord", self._stop, self.stream)
        try:
            self._call("cuEventSynchronize", self._stop)
            return float(self._call("cuEventElapsedTime", self._start, self._stop)) * 1e-3
        except DriverError as exc:
            raise LaunchError(f"the kernel failed: {exc}") from None

    def flush_l2(self, writes: bool | None = None) -> None:
        if self._flush is None:
            n = max(1, 2 * self.l2_bytes // 4)
            self._flush = self._alloc(4 * n, np.uint32, (n,))
            self._call("cuMemsetD32Async", self._flush.ptr, 0, n, self.stream)
        n = self._flush.nbytes // 4
        name, args = flush_launch(self.flush_writes if writes is None else writes, self._flush, n)
        self._launch(self.helper(name), (math.ceil(n / 256),), (256,), 0, list(args))

    def time_empty(self, spin: bool = True) -> float:
        """Seconds of an empty kernel (the event-timing floor), with or without the spin."""
        if spin:
            self.spin()
        self._call("cuEventRecord", self._start, self.stream)
        self._launch(self.helper("kc_empty"), (1,), (1,), 0, [])
        self._call("cuEventRecord", self._stop, self.stream)
        self._call("cuEventSynchronize", self._stop)
        return float(self._call("cuEventElapsedTime", self._start, self._stop)) * 1e-3

    def _bus_id(self) -> str | None:
        """The GPU's PCI bus id, so that NVML reads this GPU (None if the driver says no)."""
        try:
            raw = self._call("cuDeviceGetPCIBusId", 32, self._dev)
        except (DriverError, RuntimeError, TypeError, AttributeError):
            return None
        text = raw.decode() if isinstance(raw, bytes) else str(raw)
        return text.split("\0")[0].strip() or None

    def describe(self) -> dict[str, Any]:
        version = int(self._call("cuDriverGetVersion"))
        nvml = try_nvml(self.pci_bus_id)
        return {"device_name": self.device_name,
                "driver_version": nvml.driver_version() if nvml else str(version),
                "runtime_version": f"{version // 1000}.{version % 1000 // 10}",
                "backend": self.name,
                "tool_versions": {"nvrtc": nvrtc_version(),
                                  "green_context": str(self.green is not None),
                                  "gpu_pci_bus_id": self.pci_bus_id or ""}}

    def close(self) -> None:
        try:
            if self._flush is not None:
                self._call("cuMemFree", self._flush.ptr)
            if self.green is not None:
                self.green.destroy(self._call)
            # put back the context that was current before, or none: leaving the destroyed
            # green context current makes the next backend's close restore a dangling
            # handle, and the context created after it crashed the process
            self._call("cuCtxSetCurrent", self._before())
            self._call("cuDevicePrimaryCtxRelease", self._dev)
        except (DriverError, TypeError, ValueError):
            pass

"""Stand-ins for CuPy and cuda.bindings.driver, enough to drive the CUDA backends' logic.

They record every call in ``log`` so that tests can check the order of operations
(busy-wait before the start event, the green-context calls, ...). Kernels do nothing
except ``matmul_naive``, which the fake computes with NumPy.
"""

from __future__ import annotations

import enum
import types

import numpy as np


# -- CuPy ---------------------------------------------------------------------------------
class FakeArray:
    def __init__(self, shape, dtype, log):
        self.host = np.zeros(shape, dtype)
        self.nbytes, self.size, self.dtype = self.host.nbytes, self.host.size, self.host.dtype
        self.data = types.SimpleNamespace(ptr=id(self))
        self._log = log

    def set(self, host, stream=None):
        self._log.append("set")
        self.host[...] = np.asarray(host).reshape(self.host.shape)

    def get(self, stream=None):
        self._log.append("get")
        return self.host.copy()


class FakeFunction:
    def __init__(self, name, log, regs=40):
        self.name, self._log = name, log
        self.num_regs, self.shared_size_bytes, self.local_size_bytes = regs, 2048, 0
        self.max_threads_per_block = 1024

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        self._log.append(f"launch {self.name} {grid} {block}")
        if self.name == "matmul_naive":
            a, b, c, n = args
            n = int(n)
            c.host[:] = (a.host.reshape(n, n).astype(np.float64)
                         @ b.host.reshape(n, n)).astype(np.float32).ravel()


def fake_cupy(log, name=b"NVIDIA H100 80GB HBM3", devices=1, elapsed_ms=0.0042,
              compile_error=None):
    cp = types.ModuleType("cupy")
    cp.__version__ = "14.2.0"
    cp.uint32 = np.uint32
    cp.modules = []

    class OutOfMemoryError(Exception):
        pass

    class RawModule:
        def __init__(self, code=None, options=(), path=None):
            self.options, self.path = options, path
            cp.modules.append(self)
            log.append(f"module {' '.join(options)}" if path is None else f"module {path}")

        def get_function(self, fname):
            if compile_error and compile_error in " ".join(self.options):
                raise RuntimeError("nvrtc: error: identifier 'oops' is undefined")
            return FakeFunction(fname, log)

    class Stream:
        ptr = 7

        def __init__(self, non_blocking=False):
            pass

        def synchronize(self):
            log.append("stream sync")

        def begin_capture(self):
            raise RuntimeError("no graphs in the fake")

    class Event:
        def record(self, stream=None):
            log.append(f"record {id(self)}")

        def synchronize(self):
            log.append("event sync")

    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: devices,
        getDeviceProperties=lambda i: {"name": name, "multiProcessorCount": 132,
                                       "l2CacheSize": 50 * 2**20, "major": 9, "minor": 0},
        memGetInfo=lambda: (70 * 2**30, 80 * 2**30),
        memcpyDeviceToDevice=3,
        memcpyAsync=lambda dst, src, n, kind, stream: log.append("memcpy d2d"),
        driverGetVersion=lambda: 13000, runtimeGetVersion=lambda: 13000)
    if devices == 0:
        def no_device():
            raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")
        runtime.getDeviceCount = no_device
    cp.cuda = types.SimpleNamespace(
        runtime=runtime, Stream=Stream, Event=Event,
        Device=lambda i: types.SimpleNamespace(use=lambda: None, pci_bus_id="0000:01:00.0"),
        get_elapsed_time=lambda a, b: elapsed_ms,
        nvrtc=types.SimpleNamespace(getVersion=lambda: (13, 0)),
        memory=types.SimpleNamespace(OutOfMemoryError=OutOfMemoryError))
    cp.RawModule = RawModule
    cp.empty = lambda shape, dtype: FakeArray(shape, dtype, log)
    cp.zeros = lambda n, dtype=np.float32: FakeArray(n, dtype, log)
    cp.get_default_memory_pool = lambda: types.SimpleNamespace(free_all_blocks=lambda: None)
    return cp


# -- cuda.bindings.driver -----------------------------------------------------------------
class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION = 914


def fake_driver(log, total_sms=132, granularity=8):
    cu = types.ModuleType("driver")
    cu.CUresult = CUresult
    cu.CUdevResourceType = types.SimpleNamespace(CU_DEV_RESOURCE_TYPE_SM=1)
    cu.CUgreenCtxCreate_flags = types.SimpleNamespace(CU_GREEN_CTX_DEFAULT_STREAM=1)
    cu.CUstream_flags = types.SimpleNamespace(CU_STREAM_NON_BLOCKING=1)
    attrs = ("MULTIPROCESSOR_COUNT", "L2_CACHE_SIZE", "COMPUTE_CAPABILITY_MAJOR",
             "COMPUTE_CAPABILITY_MINOR")
    cu.CUdevice_attribute = types.SimpleNamespace(**{f"CU_DEVICE_ATTRIBUTE_{a}": a for a in attrs})
    fattrs = ("NUM_REGS", "SHARED_SIZE_BYTES", "LOCAL_SIZE_BYTES", "MAX_THREADS_PER_BLOCK")
    cu.CUfunction_attribute = types.SimpleNamespace(**{f"CU_FUNC_ATTRIBUTE_{a}": a for a in fattrs})
    ok = CUresult.CUDA_SUCCESS

    def resource(count):
        return types.SimpleNamespace(sm=types.SimpleNamespace(smCount=count))

    def record(name, *result):
        def call(*args):
            log.append((name, args))
            return (ok, *result) if result else (ok,)
        return call

    def split(groups, res, flags, count):
        log.append(("cuDevSmResourceSplitByCount", (groups, res.sm.smCount, flags, count)))
        granted = -(-count // granularity) * granularity
        return ok, [resource(granted)], 1, resource(res.sm.smCount - granted)

    def attribute(attr, dev):
        return ok, {"MULTIPROCESSOR_COUNT": total_sms, "L2_CACHE_SIZE": 50 * 2**20,
                    "COMPUTE_CAPABILITY_MAJOR": 9, "COMPUTE_CAPABILITY_MINOR": 0}[attr]

    def launch(func, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        log.append(("cuLaunchKernel", (func, gx, gy, gz, bx, by, bz, shared, stream, params)))
        return (ok,)

    cu.cuInit = record("cuInit")
    cu.cuDeviceGet = record("cuDeviceGet", 0)
    cu.cuDeviceGetName = record("cuDeviceGetName", b"NVIDIA H100 80GB HBM3\0\0")
    cu.cuDeviceGetAttribute = attribute
    cu.cuDevicePrimaryCtxRetain = record("cuDevicePrimaryCtxRetain", "primary")
    cu.cuCtxGetCurrent = record("cuCtxGetCurrent", None)
    cu.cuDeviceGetDevResource = lambda dev, kind: (log.append(("cuDeviceGetDevResource", kind))
                                                   or (ok, resource(total_sms)))
    cu.cuDevSmResourceSplitByCount = split
    cu.cuDevResourceGenerateDesc = lambda res, n: (log.append(("desc", res[0].sm.smCount))
                                                   or (ok, f"desc{res[0].sm.smCount}"))
    cu.cuGreenCtxCreate = record("cuGreenCtxCreate", "green")
    cu.cuCtxFromGreenCtx = record("cuCtxFromGreenCtx", "green-context")
    cu.cuCtxSetCurrent = record("cuCtxSetCurrent")
    cu.cuGreenCtxStreamCreate = record("cuGreenCtxStreamCreate", "green-stream")
    cu.cuEventCreate = record("cuEventCreate", "event")
    cu.cuLaunchKernel = launch
    cu.cuGetErrorName = lambda err: (ok, CUresult(err).name.encode())
    cu.cuDriverGetVersion = record("cuDriverGetVersion", 13000)
    cu.CUstreamCaptureMode = types.SimpleNamespace(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL=1)
    cu.CUstreamCaptureStatus = types.SimpleNamespace(CU_STREAM_CAPTURE_STATUS_NONE=0,
                                                     CU_STREAM_CAPTURE_STATUS_ACTIVE=1)
    cu.cuStreamBeginCapture = record("cuStreamBeginCapture")
    cu.cuStreamEndCapture = record("cuStreamEndCapture", "graph")
    cu.cuStreamIsCapturing = record("cuStreamIsCapturing", 0)
    cu.cuGraphInstantiateWithFlags = record("cuGraphInstantiateWithFlags", "graph-exec")
    cu.cuGraphLaunch = record("cuGraphLaunch")
    cu.cuGraphExecDestroy = record("cuGraphExecDestroy")
    cu.cuGraphDestroy = record("cuGraphDestroy")
    cu.cuStreamSynchronize = record("cuStreamSynchronize")
    return cu

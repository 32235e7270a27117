"""The CUDA backends' logic against stand-in CuPy and driver modules (no GPU needed)."""

import sys
import types

import numpy as np
import pytest

from kerncast import InputError, ToolchainError
from kerncast.corpus import get_kernel
from kerncast.measure._backend import CompileError
from kerncast.measure._run import measure_config
from kerncast.measure._timing import TimingPolicy

from .cuda_fakes import fake_cupy, fake_driver

QUICK = TimingPolicy(warmup=1, warmup_s=0.0, min_reps=5, max_reps=6, budget_s=0.5)


@pytest.fixture
def log():
    return []


def _no_cubin(source, options, arch, name):
    raise ToolchainError("no NVRTC here")


def _cupy(monkeypatch, log, cubin=_no_cubin, **kw):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(log, **kw))
    monkeypatch.setattr("kerncast.measure._cupy.cubin_file", cubin)
    from kerncast.measure._cupy import CupyBackend

    return CupyBackend


def test_missing_cupy_says_what_to_use_instead(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    from kerncast.measure._cupy import CupyBackend

    with pytest.raises(ToolchainError) as info:
        CupyBackend()
    message = str(info.value)
    assert "pip install cupy-cuda13x" in message and "--backend pocl" in message
    assert "--backend replay" in message and "\n" not in message


def test_no_gpu_is_a_one_line_error(monkeypatch, log):
    backend = _cupy(monkeypatch, log, devices=0)
    with pytest.raises(ToolchainError, match=r"^no CUDA GPU is usable \(.*no CUDA-capable"):
        backend()


def test_the_gpu_must_be_the_device_asked_for(monkeypatch, log):
    backend = _cupy(monkeypatch, log)
    assert backend(device="h100").device_key == "h100-sxm"
    with pytest.raises(InputError, match=r"--device h200 was asked for, but the GPU here is "
                                         r"'NVIDIA H100 80GB HBM3' \(h100-sxm\); pass --device h100-sxm"):
        backend(device="h200")


def test_modules_are_compiled_once_per_define_set(monkeypatch, log):
    backend = _cupy(monkeypatch, log)(device="h100")
    kernel = get_kernel("matmul_tiled")
    first = backend.compile(kernel.instance(kernel.launch("small", {"tile": 16}))[0])
    backend.compile(kernel.instance(kernel.launch("small", {"tile": 16}))[0])
    backend.compile(kernel.instance(kernel.launch("small", {"tile": 32}))[0])
    modules = [e for e in log if e.startswith("module")]
    assert modules == ["module -std=c++17 -DPAD=0 -DTILE=16", "module -std=c++17 -DPAD=0 -DTILE=32"]
    assert first.resources.registers == 40 and first.resources.static_shared == 2048


def test_cupy_loads_the_shared_nvrtc_cubin(monkeypatch, log, tmp_path):
    calls = []

    def cubin(source, options, arch, name):
        calls.append((options, arch, name))
        return tmp_path / "k.cubin"

    backend = _cupy(monkeypatch, log, cubin=cubin)(device="h100")
    kernel = get_kernel("matmul_tiled")
    backend.compile(kernel.instance(kernel.launch("small", {"tile": 32}))[0])
    assert calls == [(("-std=c++17", "-DPAD=0", "-DTILE=32"), "sm_90", "matmul.cu")]
    assert log[-1] == f"module {tmp_path / 'k.cubin'}"


def test_compile_errors_become_compile_error(monkeypatch, log):
    backend = _cupy(monkeypatch, log, compile_error="-DTILE=8")(device="h100")
    kernel = get_kernel("matmul_tiled")
    with pytest.raises(CompileError, match="identifier 'oops'"):
        backend.compile(kernel.instance(kernel.launch("small", {"tile": 8}))[0])
    row = measure_config(backend, kernel, kernel.launch("small", {"tile": 8}), policy=QUICK)
    assert row["status"] == "compile_failed"


def test_busy_wait_is_queued_before_the_start_event(monkeypatch, log):
    backend = _cupy(monkeypatch, log, elapsed_ms=0.0042)(device="h100")
    kernel = get_kernel("matmul_naive")
    config = kernel.launch("small")
    source, launch = kernel.instance(config)
    compiled = backend.compile(source)
    dev = backend.upload({"a": np.zeros(4, np.float32), "n": np.int32(2)})
    log.clear()
    seconds = backend.time_launch(compiled, launch, {**dev, "b": dev["a"], "c": dev["a"]},
                                  before=lambda: log.append("before"))
    assert seconds == pytest.approx(4.2e-6)
    steps = [e.split()[0] + (" " + e.split()[1] if e.startswith("launch") else "") for e in log
             if not e.startswith("module")]  # the helpers module compiles on first use
    assert steps[:5] == ["before", "launch kc_spin", "record", "launch matmul_naive", "record"]
    assert steps[5] == "event"


def test_measure_config_through_cupy_checks_outputs(monkeypatch, log):
    backend = _cupy(monkeypatch, log)(device="h100")
    naive, tiled = get_kernel("matmul_naive"), get_kernel("matmul_tiled")
    row = measure_config(backend, naive, naive.launch("small"), policy=QUICK)
    assert row["status"] == "ok" and row["time_median_s"] == pytest.approx(4.2e-6)
    assert row["backend"] == "cupy" and row["runtime_version"] == "13.0"
    row = measure_config(backend, tiled, tiled.launch("small"), policy=QUICK)  # fake does nothing
    assert row["status"] == "wrong_output" and "never written" in row["error"]


def _driver(monkeypatch, log, **kw):
    cu = fake_driver(log, **kw)
    bindings = types.ModuleType("cuda.bindings")
    bindings.driver = cu
    cuda = types.ModuleType("cuda")
    cuda.bindings = bindings
    monkeypatch.setitem(sys.modules, "cuda", cuda)
    monkeypatch.setitem(sys.modules, "cuda.bindings", bindings)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", cu)
    monkeypatch.setattr("kerncast.measure._driver.try_nvml", lambda *a: None)
    from kerncast.measure._driver import DriverBackend

    return DriverBackend


def test_green_context_with_sixteen_sms(monkeypatch, log):
    backend = _driver(monkeypatch, log)(device="h100", sm_count=16)
    assert backend.sm_count == 16 and backend.sm_count_requested == 16
    names = [e[0] for e in log if isinstance(e, tuple)]
    i = names.index("cuDevSmResourceSplitByCount")
    assert names[i - 1:i + 6] == ["cuDeviceGetDevResource", "cuDevSmResourceSplitByCount", "desc",
                                  "cuGreenCtxCreate", "cuCtxFromGreenCtx", "cuCtxSetCurrent",
                                  "cuGreenCtxStreamCreate"]
    assert dict(log)["cuDevSmResourceSplitByCount"] == (1, 132, 0, 16)
    assert backend.stream == "green-stream"


def test_granted_sms_are_recorded_when_rounded_up(monkeypatch, log):
    backend = _driver(monkeypatch, log, granularity=8)(device="h100", sm_count=12)
    assert (backend.sm_count_requested, backend.sm_count) == (12, 16)


def test_all_sms_use_the_whole_resource_unsplit(monkeypatch, log):
    backend = _driver(monkeypatch, log)(device="h100", sm_count=132)
    assert backend.sm_count == 132
    assert "cuDevSmResourceSplitByCount" not in [e[0] for e in log if isinstance(e, tuple)]
    assert ("desc", 132) in log


def test_kernel_parameters_are_packed_as_pointers(monkeypatch, log):
    from kerncast.measure._driver import DeviceBuffer

    backend = _driver(monkeypatch, log)(device="h100", sm_count=16)
    buf = DeviceBuffer(123456, 16, np.dtype(np.float32), (4,))
    backend._launch("func", (3, 2), (16, 16), 0, [buf, np.int32(48), np.float64(0.5)])
    call = [e for e in log if isinstance(e, tuple) and e[0] == "cuLaunchKernel"][-1][1]
    assert call[:8] == ("func", 3, 2, 1, 16, 16, 1, 0) and call[8] == "green-stream"
    holders, pointers = backend._held
    assert int(pointers.ctypes.data) == call[9]
    assert [h.ctypes.data for h in holders] == pointers.tolist()
    assert holders[0][0] == 123456 and holders[1].dtype == np.int32 and holders[1][0] == 48
    assert holders[2].dtype == np.float64


def test_a_view_argument_is_a_pointer_into_its_buffer_that_is_never_freed(monkeypatch, log):
    from kerncast.measure._driver import DeviceBuffer

    backend = _driver(monkeypatch, log)(device="h100", sm_count=16)
    buf = DeviceBuffer(123456, 64, np.dtype(np.float32), (16,))
    view = backend.offset(backend.offset(buf, 16), 8)
    assert (view.address, view.nbytes, view.view) == (123456 + 24, 40, True)
    backend._launch("func", (1,), (32,), 0, [view, buf])
    holders, _ = backend._held
    assert [h[0] for h in holders] == [123456 + 24, 123456]
    calls: list = []
    monkeypatch.setattr(backend, "_call", lambda name, *args: calls.append((name, args)))
    backend.free({"x": buf, "p": view})
    assert [c for c in calls if c[0] == "cuMemFree"] == [("cuMemFree", (123456,))]


def _names(log) -> list[str]:
    return [e[0] for e in log if isinstance(e, tuple)]


def test_a_loop_of_launches_replays_one_captured_graph(monkeypatch, log):
    from kerncast.measure._driver import GRAPH_BATCH

    backend = _driver(monkeypatch, log)(device="h100", sm_count=16)
    compiled = types.SimpleNamespace(handle="func")
    launch = types.SimpleNamespace(grid=(4,), block=(32,), dynamic_shared=0)
    monkeypatch.setattr(backend, "ordered", lambda config, dev: [])
    log.clear()
    done = backend.launch_many(compiled, launch, {}, 2 * GRAPH_BATCH + 1)
    names = _names(log)
    assert done == 3 * GRAPH_BATCH  # whole graphs: at least the launches asked for
    assert names.count("cuLaunchKernel") == GRAPH_BATCH  # captured once, not launched
    assert names.index("cuStreamBeginCapture") < names.index("cuLaunchKernel")
    assert names.count("cuGraphLaunch") == 3
    assert names[-2:] == ["cuGraphExecDestroy", "cuGraphDestroy"]


def test_a_loop_falls_back_to_launches_where_no_graph_can_be_captured(monkeypatch, log):
    from kerncast.measure._driver import DriverError

    backend = _driver(monkeypatch, log)(device="h100", sm_count=16)
    compiled = types.SimpleNamespace(handle="func")
    launch = types.SimpleNamespace(grid=(4,), block=(32,), dynamic_shared=0)
    monkeypatch.setattr(backend, "ordered", lambda config, dev: [])

    def refuse(*args):
        raise DriverError("cuStreamBeginCapture", 801, "CUDA_ERROR_NOT_SUPPORTED")

    monkeypatch.setattr(backend, "_launch_graph", refuse)
    log.clear()
    assert backend.launch_many(compiled, launch, {}, 7) == 7
    assert _names(log).count("cuLaunchKernel") == 7


def test_closing_a_green_context_never_leaves_a_destroyed_one_current(monkeypatch, log):
    Driver = _driver(monkeypatch, log)
    cu = sys.modules["cuda.bindings.driver"]
    state = {"current": None, "destroyed": set(), "bad": [], "n": 0}
    ok = cu.CUresult.CUDA_SUCCESS

    def create(desc, dev, flags):
        state["n"] += 1
        return ok, f"green{state['n']}"

    def set_current(ctx):
        name = None if ctx is None or isinstance(ctx, int) or ctx == "null" else ctx
        if name in state["destroyed"]:
            state["bad"].append(name)  # the real driver crashes a later call
        state["current"] = name
        return (ok,)

    def destroy(green):
        state["destroyed"].add(f"ctx-{green}")
        return (ok,)

    cu.cuGreenCtxCreate = create
    cu.cuCtxFromGreenCtx = lambda green: (ok, f"ctx-{green}")
    cu.cuCtxGetCurrent = lambda: (ok, state["current"])
    cu.cuCtxSetCurrent = set_current
    cu.cuGreenCtxDestroy = destroy
    cu.cuStreamDestroy = lambda stream: (ok,)
    cu.cuDevicePrimaryCtxRelease = lambda dev: (ok,)
    cu.CUcontext = lambda value=0: "null"
    for sms in (8, 16, 24, 32):  # an SM sweep: each context closed before the next
        Driver(device="h100", sm_count=sms).close()
        assert state["current"] is None
    assert state["bad"] == []


def test_the_l2_flush_writes_unless_asked_to_leave_clean_lines(monkeypatch, log):
    backend = _cupy(monkeypatch, log)(device="h100")
    backend.flush_l2()
    backend.flush_writes = False
    backend.flush_l2()
    flushes = [e.split()[1] for e in log if e.startswith("launch kc_flush")]
    assert flushes == ["kc_flush", "kc_flush_clean"]


def test_a_paid_sample_times_the_launch_and_a_reading_flush_less_that_flush_alone(monkeypatch, log):
    backend = _cupy(monkeypatch, log)(device="h100")
    kernel = get_kernel("matmul_naive")
    config = kernel.launch("small")
    source, launch = kernel.instance(config)
    compiled = backend.compile(source)
    dev = backend.upload({"a": np.zeros(4, np.float32), "n": np.int32(2)})
    dev = {**dev, "b": dev["a"], "c": dev["a"]}
    # the paid interval reads 50 us, the reading flush after another one 40 us
    elapsed = iter([0.050] + [0.040] * 31 + [0.045])
    backend._cp.cuda.get_elapsed_time = lambda a, b: next(elapsed)
    log.clear()
    assert backend.time_paid(compiled, launch, dev) == pytest.approx(10e-6)
    launches = [e.split()[1] for e in log if e.startswith("launch")]
    assert launches[:3] == ["kc_spin", "matmul_naive", "kc_flush_clean"]
    assert launches.count("kc_flush_clean") == 1 + 2 * 31  # the reference, measured once
    assert backend.time_paid(compiled, launch, dev) == pytest.approx(5e-6)
    assert "paid" in backend.l2_states

"""NVML, read only, through a stand-in pynvml module: clocks, versions, energy."""

import json
import sys
import time
import types

import pytest

from kerncast.measure._nvml import WINDOW_KEY, Nvml, NvmlEnergyObserver, window_power


class FakeNVMLError(Exception):
    pass


def _fake_pynvml(energy_steps, power=250.0):
    nv = types.ModuleType("pynvml")
    nv.NVMLError = FakeNVMLError
    nv.NVML_CLOCK_SM, nv.NVML_CLOCK_MEM = 1, 2
    energy = iter(energy_steps)
    nv.calls = []
    nv.nvmlInit = lambda: nv.calls.append("init")
    nv.nvmlDeviceGetHandleByIndex = lambda i: f"gpu{i}"
    nv.nvmlDeviceGetHandleByPciBusId = lambda bus: "gpu-by-bus"
    nv.nvmlDeviceGetClockInfo = lambda h, which: 1980 if which == 1 else 2619
    nv.nvmlDeviceGetName = lambda h: b"NVIDIA H100 80GB HBM3"
    nv.nvmlSystemGetDriverVersion = lambda: "580.159.04"
    nv.nvmlSystemGetCudaDriverVersion_v2 = lambda: 13000
    nv.nvmlDeviceGetTotalEnergyConsumption = lambda h: next(energy)
    nv.nvmlDeviceGetPowerUsage = lambda h: int(power * 1000)
    for setter in ("nvmlDeviceSetApplicationsClocks", "nvmlDeviceSetPowerManagementLimit",
                   "nvmlDeviceSetGpuLockedClocks"):
        setattr(nv, setter, lambda *a: (_ for _ in ()).throw(AssertionError("changed a setting")))
    return nv


@pytest.fixture
def pynvml(monkeypatch):
    nv = _fake_pynvml([1_000_000, 1_060_000])
    monkeypatch.setitem(sys.modules, "pynvml", nv)
    return nv


def test_clocks_names_and_versions(pynvml):
    nvml = Nvml(pci_bus_id="0000:01:00.0")
    assert nvml.handle == "gpu-by-bus"
    assert nvml.clocks() == (1980.0, 2619.0)
    assert nvml.name() == "NVIDIA H100 80GB HBM3"
    assert nvml.driver_version() == "580.159.04" and nvml.cuda_version() == "13.0"


def test_energy_over_a_loop_from_the_total_energy_counter(pynvml):
    now, counter = {"s": 10.0}, {"mj": 1_000_000}
    pynvml.nvmlDeviceGetTotalEnergyConsumption = lambda h: counter["mj"]

    def run(n):  # the loop takes 0.3 s by the fake clock; the counter moves once, at its end
        now["s"] += 0.3
        counter["mj"] += 60_000
        return n

    observer = NvmlEnergyObserver(Nvml(), min_duration_s=0.2, sample_period_s=0.001,
                                  clock=lambda: now["s"])
    result = observer.measure(run, launches=30_000, kernel_time_s=9e-6)
    assert result["launches"] == 30_000
    assert result["energy_j"] == pytest.approx(60.0)           # 60,000 mJ: before and after
    assert result["avg_power_w"] == pytest.approx(200.0)        # 60 J / 0.3 s
    assert result["energy_per_launch_j"] == pytest.approx(0.002)
    assert result["idle_power_w"] == 250.0
    assert result["gpu_busy_fraction"] == pytest.approx(30_000 * 9e-6 / 0.3)
    assert result["time_per_launch_s"] == pytest.approx(1e-5)


def test_a_counter_that_moves_in_steps_is_read_between_its_updates(pynvml):
    """A counter of 200 W that moves every 50 ms: read before and after the loop it is off
    by up to a step; between its first update after the warm-up and its last it is not."""
    start = time.perf_counter()
    pynvml.nvmlDeviceGetTotalEnergyConsumption = \
        lambda h: 200.0 * 50.0 * ((time.perf_counter() - start + 0.03) // 0.05)
    observer = NvmlEnergyObserver(Nvml(), min_duration_s=0.4, warmup_s=0.1, poll_s=0.0005)
    result = observer.measure(lambda n: time.sleep(0.62) or n, launches=100)
    assert result["avg_power_w"] == pytest.approx(200.0, rel=0.02)
    assert result["energy_j"] == pytest.approx(200.0 * result["duration_s"], rel=0.02)
    assert 0.3 <= result[WINDOW_KEY] <= 0.55  # whole steps between 0.1 s and the loop's end


@pytest.mark.parametrize(("ticks", "expected"), [
    ([(0.05, 0.0), (0.25, 10_000.0), (0.45, 50_000.0), (0.65, 90_000.0)], (200.0, 0.4)),
    ([(0.05, 0.0), (0.25, 10_000.0)], None),      # one update after the warm-up
    ([], None),
])
def test_window_power_between_the_first_update_after_the_warm_up_and_the_last(ticks,
                                                                               expected):
    got = window_power(ticks, start=0.0, warmup_s=0.2)
    assert got == (pytest.approx(expected) if expected else None)


def test_launch_count_keeps_the_loop_above_the_minimum(pynvml):
    observer = NvmlEnergyObserver(Nvml(), min_duration_s=0.2, warmup_s=0.1)
    assert observer.launches_for(1e-3) == 360           # 1.2 x (0.1 + 0.2) s / 1 ms
    assert observer.launches_for(1.0) == 1
    assert observer.launches_for(float("nan")) == 1000
    assert observer.launches_for(1e-9) == observer.max_launches


def test_missing_nvml_names_the_package(monkeypatch):
    from kerncast import ToolchainError

    monkeypatch.setitem(sys.modules, "pynvml", None)
    with pytest.raises(ToolchainError, match="install nvidia-ml-py"):
        Nvml()


def test_energy_row_from_a_backend_loop(pynvml, monkeypatch):
    from kerncast.corpus import get_kernel
    from kerncast.measure._energy import measure_energy

    from .fakes import FakeBackend

    counter = {"mj": 0}
    pynvml.nvmlDeviceGetTotalEnergyConsumption = lambda h: counter["mj"]
    kernel = get_kernel("matmul_naive")
    backend = FakeBackend(times=[1e-3], behaviours={"matmul_naive": "unwritten"})
    many = backend.launch_many
    now = {"s": 0.0}  # the loop's clock: its launches keep the GPU busy all along

    def launch_many(*args):  # each loop of launches adds 50 J
        done = many(*args)
        counter["mj"] += 50_000
        now["s"] += done * 1e-3
        return done

    backend.launch_many = launch_many
    nvml = Nvml()
    observer = NvmlEnergyObserver(nvml, min_duration_s=0.0, warmup_s=0.0, clock=lambda: now["s"])
    row = measure_energy(backend, kernel, kernel.launch("small"), observer, monitor=nvml)
    assert row["status"] == "ok" and row["launches"] > 0
    assert row["energy_j"] == pytest.approx(50.0) and row["sm_clock_mhz_before"] == 1980.0
    assert row["energy_per_launch_j"] == pytest.approx(50.0 / row["launches"])
    assert "repetitions" not in row and WINDOW_KEY not in row
    assert json.loads(row["tool_versions"])[WINDOW_KEY] == "loop"  # the counter moved once


def test_an_energy_loop_the_host_left_idle_is_a_host_bound_row_that_keeps_its_readings(
        pynvml, monkeypatch):
    from kerncast.corpus import get_kernel
    from kerncast.measure import _energy

    from .fakes import FakeBackend

    readings = {"launches": 1000, "duration_s": 1.0, "energy_j": 130.0, "avg_power_w": 130.0,
                "time_per_launch_s": 1e-3, "gpu_busy_fraction": 0.31}
    monkeypatch.setattr(_energy, "_loop", lambda session, observer, kernel_time: dict(readings))
    kernel = get_kernel("matmul_naive")
    nvml = Nvml()
    row = _energy.measure_energy(FakeBackend(times=[1e-3]), kernel, kernel.launch("small"),
                                 NvmlEnergyObserver(nvml), monitor=nvml)
    assert row["status"] == "host_bound" and row["avg_power_w"] == 130.0
    assert "busy for 31% of its time (1000.0 us a launch)" in row["error"]
    busy = dict(row, status="ok", gpu_busy_fraction=0.95)
    assert _energy.host_bound(busy) is None
    assert _energy.host_bound(dict(row, status="timeout")) is None


def test_without_a_bus_id_nvml_reads_the_gpu_cuda_visible_devices_names(pynvml, monkeypatch):
    pynvml.nvmlDeviceGetHandleByUUID = lambda uuid: f"uuid:{uuid}"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    assert Nvml().handle == "gpu3"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-abc")
    assert Nvml().handle == "uuid:GPU-abc"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert Nvml().handle == "gpu0"


def test_gpus_are_named_by_index_or_uuid_and_a_missing_one_is_an_input_error(pynvml):
    from kerncast import InputError
    from kerncast.measure._nvml import gpu_count, gpu_name

    pynvml.nvmlDeviceGetCount = lambda: 2

    def by_index(i):
        if i >= 2:
            raise FakeNVMLError("no such GPU")
        return f"gpu{i}"

    pynvml.nvmlDeviceGetHandleByIndex = by_index
    pynvml.nvmlDeviceGetHandleByUUID = lambda uuid: "gpu-uuid"
    assert gpu_count() == 2 and gpu_name("1") == "NVIDIA H100 80GB HBM3"
    assert gpu_name("GPU-1") == "NVIDIA H100 80GB HBM3"
    with pytest.raises(InputError, match="no GPU 5 here"):
        gpu_name("5")


def test_a_campaign_on_the_wrong_gpu_stops_before_any_item(pynvml, tmp_path):
    from kerncast import InputError
    from kerncast.measure._campaign import Campaign

    campaign = Campaign(tmp_path / "out", device="h200", backend="cupy",
                        kernels=["copy_vector"], sizes=["small"])
    with pytest.raises(InputError, match="--device h200 was asked for.*pass --device h100"):
        campaign.run()
    assert not (tmp_path / "out" / "parts").exists()
    with pytest.raises(InputError, match="GPU 0: --device h200"):
        Campaign(tmp_path / "two", device="h200", backend="cupy", kernels=["copy_vector"],
                 sizes=["small"], gpus=("0", "1")).run()


def test_a_loop_that_fails_leaves_no_thread_reading_the_gpu(pynvml):
    import threading

    pynvml.nvmlDeviceGetTotalEnergyConsumption = lambda h: 1_000_000
    before = threading.active_count()

    def fail(n):
        raise RuntimeError("launch failed")

    with pytest.raises(RuntimeError, match="launch failed"):
        NvmlEnergyObserver(Nvml(), sample_period_s=0.001).measure(fail, launches=10)
    assert threading.active_count() == before

"""The ``components`` model (Song et al.) and the helpers the counter models share."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from kerncast import InputError
from kerncast.data import Dataset
from kerncast.models import get_predictor
from kerncast.models._base import LaunchInputs
from kerncast.models.zoo._components import (
    Machine,
    busiest_share,
    component_times,
    dram_seconds,
    launch_counters,
    machine,
)

#: A toy device with round numbers, so that every figure below is worked out by hand.
TOY = Machine(
    device="toy", sms=4, clock_hz=1e9, schedulers=4, warp_size=32, warps_per_sm=64,
    lanes={"fma": 128.0, "alu": 64.0, "fp64": 64.0, "xu": 16.0, "lsu": 32.0},
    instructions={"fp32": (128.0, 4.0), "int_logic": (64.0, 2.0), "fp64": (64.0, 8.0),
                  "sfu": (16.0, 16.0), "warp": (32.0, 32.0)},
    dram_bps=(400e9, 300e9, 200e9), l2_bps=1e12, shared_bytes_per_clk=64.0,
    l1_curve=((1.0, 0.5), (4.0, 1.0)), launch_s=2e-6, per_block_s=1e-9,
    latency={"dram": 500.0, "l2": 200.0, "l1": 30.0, "shared": 20.0}, peak_dram_bps=512e9,
)

#: One launch of 8 blocks of 128 threads, 2 blocks on the busiest of the 4 SMs.
ROW = {
    "blocks": 8, "threads_per_block": 128,
    "sm__ctas_launched.sum": 8.0, "sm__ctas_launched.max": 2.0,
    "smsp__inst_issued.sum": 1_600_000.0, "smsp__inst_executed.sum": 1_500_000.0,
    "smsp__inst_executed_pipe_fma.sum": 800_000.0, "smsp__inst_executed_pipe_xu.sum": 100_000.0,
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 300_000.0,
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": 100_000.0,
    "l1tex__t_sectors.sum": 1_600_000.0, "l1tex__t_requests.sum": 100_000.0,
    "dram__bytes_read.sum": 45e6, "dram__bytes_write.sum": 15e6,
    "lts__t_sectors.sum": 5e6,
}


def test_components_of_a_hand_worked_launch():
    parts = component_times(ROW, TOY)
    # share of the busiest SM: 2 of 8 blocks = 0.25
    # issue: 1.6e6 * 0.25 / (4 schedulers * 1e9) = 100 us; fma: 8e5 * 0.25 * 32 / (128 * 1e9)
    # = 50 us; xu: 1e5 * 0.25 * 32 / (16 * 1e9) = 50 us; compute = the largest = 100 us
    assert parts["compute"] == pytest.approx(100e-6)
    # shared: 64 B/clk / 128 B = 0.5 wavefronts per clock; 4e5 * 0.25 / (0.5 * 1e9) = 200 us
    assert parts["shared"] == pytest.approx(200e-6)
    # l1tex: 1.6e6 sectors = 4e5 lines, 4 per request -> 1.0 line per clock;
    # 4e5 * 0.25 / 1e9 = 100 us
    assert parts["l1tex"] == pytest.approx(100e-6)
    # DRAM: 60 MB with a quarter written: halfway between 400 and 300 GB/s = 350 GB/s;
    # 60e6 / 350e9 = 171.43 us. L2: 5e6 sectors * 32 B / 1 TB/s = 160 us
    assert parts["dram"] == pytest.approx(60e6 / 350e9)
    assert parts["l2"] == pytest.approx(160e-6)
    assert parts["global"] == pytest.approx(60e6 / 350e9)
    # blocks: 8 * 1 ns; launch: 2 us
    assert parts["blocks"] == pytest.approx(8e-9)
    assert parts["launch"] == pytest.approx(2e-6)


def test_a_missing_shared_wavefront_count_falls_back_to_instructions_and_conflicts():
    row = {k: v for k, v in ROW.items() if "wavefronts" not in k}
    row.update({"smsp__inst_executed_op_shared_ld.sum": 100_000.0,
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 100_000.0})
    # 2e5 wavefronts * 0.25 / (0.5 * 1e9) = 100 us
    assert component_times(row, TOY)["shared"] == pytest.approx(100e-6)


def test_busiest_share_counts_a_partial_wave_and_small_grids():
    assert busiest_share({"blocks": 10, "sm__ctas_launched.sum": 10.0,
                          "sm__ctas_launched.max": 3.0}, TOY) == pytest.approx(0.3)
    # no per-SM count: ceil(2 / 4) = 1 block on the busiest SM of 2
    assert busiest_share({"blocks": 2}, TOY) == pytest.approx(0.5)


def test_dram_bandwidth_follows_the_share_written():
    assert dram_seconds(400e9, 0.0, TOY) == pytest.approx(1.0)      # reads: 400 GB/s
    assert dram_seconds(150e9, 150e9, TOY) == pytest.approx(1.0)    # half: copy, 300 GB/s
    assert dram_seconds(0.0, 200e9, TOY) == pytest.approx(1.0)      # writes: 200 GB/s
    assert dram_seconds(0.0, 0.0, TOY) == 0.0


# -- the registered model on a dataset ----------------------------------------------------

KEYS = {"language": "cuda", "size": "large", "config": "default", "device": "h100-sxm",
        "sm_count": 132}


def _dataset(**extra) -> Dataset:
    times = pd.DataFrame([{"kernel": k, **KEYS, "status": "ok"} for k in ("a", "b", "c")])
    counters = pd.DataFrame([
        {"kernel": "a", **KEYS, "sample_k": 0, "status": "ok", **ROW, **extra},
        {"kernel": "b", **KEYS, "sample_k": 1, "status": "ok", **ROW, **extra},  # a sample
        {"kernel": "c", **KEYS, "sample_k": 0, "status": "profiler_failed", **ROW},
    ])
    return Dataset(times=times, counters=counters)


def test_the_model_is_launch_plus_the_largest_component_and_names_the_bottleneck():
    data = _dataset()
    model = get_predictor("components").fit(data)
    first, sample_only, failed = model.explain(data)
    parts = component_times(launch_counters(data)[0], machine("h100-sxm"))
    largest = max(parts[k] for k in ("compute", "shared", "l1tex", "global", "blocks"))
    assert first.seconds == pytest.approx(parts["launch"] + largest)
    assert first.based_on["bottleneck_component"] == "shared memory"
    assert first.bottleneck == "memory"
    assert set(first.breakdown) == {"compute", "memory", "launch"}
    assert math.isnan(sample_only.seconds) and math.isnan(failed.seconds)
    assert np.array_equal(model.predict(data), [p.seconds for p in (first, sample_only, failed)],
                          equal_nan=True)


def test_time_derived_counters_are_never_read():
    slow = _dataset(**{"gpu__time_duration.sum": 1.0, "sm__cycles_elapsed.max": 1e9,
                       "sm__throughput.avg.pct_of_peak_sustained_elapsed": 99.0})
    fast = _dataset(**{"gpu__time_duration.sum": 1e-6, "sm__cycles_elapsed.max": 10.0,
                       "sm__throughput.avg.pct_of_peak_sustained_elapsed": 1.0})
    assert "gpu__time_duration.sum" not in launch_counters(slow)[0]
    for name in ("components", "wfg", "qa"):
        a = get_predictor(name).fit(slow).predict(slow)
        b = get_predictor(name).fit(fast).predict(fast)
        assert np.array_equal(a, b, equal_nan=True), name


def test_a_dataset_without_counters_predicts_nan():
    times = pd.DataFrame([{"kernel": "a", **KEYS, "status": "ok"}])
    assert np.isnan(get_predictor("components").fit(Dataset(times=times))
                    .predict(Dataset(times=times))).all()


@pytest.mark.parametrize("name", ["components", "wfg", "qa", "gpu-random-forest"])
def test_a_single_launch_is_refused_with_what_to_use_instead(name):
    with pytest.raises(InputError, match="--model static") as err:
        get_predictor(name).explain_launch(None, None, LaunchInputs("h100"))
    assert "kerncast evaluate" in str(err.value) and "before it has run" in str(err.value)


def test_a_device_without_calibration_says_how_to_get_one():
    with pytest.raises(InputError, match="kerncast calibrate"):
        machine("gtx-580")

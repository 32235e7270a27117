"""The ``wfg`` model: the survey's Eq. (3) on a hand-worked launch."""

from __future__ import annotations

import pandas as pd
import pytest

from kerncast.data import Dataset
from kerncast.models import get_predictor
from kerncast.models.zoo._wfg import _prediction, wfg_metrics
from tests.models.zoo.test_components import KEYS, TOY

# 8 blocks of 4 warps (32 warps), 2 blocks on the busiest of the toy's 4 SMs; per warp
# 1000 instructions, 40 global loads and 10 global stores
COALESCED = {
    "blocks": 8, "threads_per_block": 128, "smsp__warps_launched.sum": 32.0,
    "sm__ctas_launched.sum": 8.0, "sm__ctas_launched.max": 2.0,
    "smsp__inst_executed.sum": 32_000.0,
    "smsp__inst_executed_op_global_ld.sum": 1280.0, "smsp__inst_executed_op_global_st.sum": 320.0,
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 1280.0,
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": 320.0,
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 1280.0 * 4,
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 320.0 * 4,
}
#: the same launch with every request touching 32 sectors (uncoalesced)
SCATTERED = {**COALESCED, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 1280.0 * 32,
             "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 320.0 * 32}


def test_eq3_metrics_of_a_compute_bound_warp():
    w = wfg_metrics(COALESCED, TOY)
    # SIMD_work / SIMD_engine = 32 / 128 = 0.25 = CPI; CYC_compute = 1000 * 0.25 = 250
    assert w["CPI"] == w["SIMD_work/SIMD_engine"] == pytest.approx(0.25)
    assert w["CYC_compute"] == pytest.approx(250.0)
    # NUM_mem = (1280 + 320) / 32 = 50; WordSize = 32 B * 6400 sectors / 1600 requests = 128
    assert w["NUM_mem"] == pytest.approx(50.0)
    assert w["WordSize"] == pytest.approx(128.0)
    # BWPerSM = 512 GB/s / 4 SMs / 1 GHz = 128 B per cycle; CYC_mem = 50 * 128 / 128 = 50
    assert w["BWPerSM"] == pytest.approx(128.0)
    assert w["CYC_mem"] == pytest.approx(50.0)
    # Latency_BW = max(0, (50 - 250) / 50) + 0.25 = 0.25
    assert w["Latency_BW"] == pytest.approx(0.25)


def test_eq3_metrics_of_a_bandwidth_bound_warp():
    w = wfg_metrics(SCATTERED, TOY)
    # WordSize = 32 * 51200 / 1600 = 1024; CYC_mem = 50 * 1024 / 128 = 400
    assert w["WordSize"] == pytest.approx(1024.0)
    assert w["CYC_mem"] == pytest.approx(400.0)
    # Latency_BW = (400 - 250) / 50 + 0.25 = 3.25
    assert w["Latency_BW"] == pytest.approx(3.25)


def test_seconds_are_the_busiest_sms_warps_one_after_another():
    # compute bound: per warp 250 + 50 * 0.25 = 262.5 cycles; 8 warps on the busiest SM
    # (32 * 2 / 8): 2100 cycles = 2.1 us at 1 GHz, + the 2 us launch
    p = _prediction("wfg", COALESCED, TOY, launch=True)
    assert p.seconds == pytest.approx(4.1e-6)
    assert p.breakdown == pytest.approx({"compute": 2.0e-6, "memory": 0.1e-6, "launch": 2e-6})
    assert p.bottleneck == "compute"
    # bandwidth bound: 250 + 50 * 3.25 = 412.5 = max(250, 400) + 50 * 0.25 cycles per warp;
    # 8 warps: 3300 cycles = 3.3 us, without the launch cost
    p = _prediction("wfg", SCATTERED, TOY, launch=False)
    assert p.seconds == pytest.approx(3.3e-6)
    assert p.bottleneck == "memory" and "launch" not in p.breakdown


def test_a_kernel_without_global_memory_has_no_stall():
    row = {k: v for k, v in COALESCED.items() if "global" not in k}
    w = wfg_metrics(row, TOY)
    assert w["NUM_mem"] == 0 and w["Latency_BW"] == 0
    assert _prediction("wfg", row, TOY, launch=False).seconds == pytest.approx(2.0e-6)


def test_the_registered_model_reads_the_launchs_counters():
    times = pd.DataFrame([{"kernel": "a", **KEYS, "status": "ok"}])
    counters = pd.DataFrame([{"kernel": "a", **KEYS, "sample_k": 0, "status": "ok", **SCATTERED}])
    data = Dataset(times=times, counters=counters)
    with_launch = get_predictor("wfg").fit(data).explain(data)[0]
    without = get_predictor("wfg", launch=False).fit(data).explain(data)[0]
    assert with_launch.seconds - without.seconds == pytest.approx(with_launch.breakdown["launch"])
    assert with_launch.based_on["wfg_per_warp"]["WordSize"] == pytest.approx(1024.0)

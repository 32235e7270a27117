"""The ``qa`` model (Zhang & Owens) on a hand-worked launch."""

from __future__ import annotations

import pytest

from kerncast.models.zoo._qa import _prediction, achieved_warps, qa_times
from tests.models.zoo.test_components import TOY

# 8 blocks, 2 on the busiest of the toy's 4 SMs (share 0.25); half of 64 warps resident
ROW = {
    "blocks": 8, "threads_per_block": 128, "sm__ctas_launched.sum": 8.0,
    "sm__ctas_launched.max": 2.0, "sm__warps_active.avg.pct_of_peak_sustained_active": 50.0,
    "smsp__inst_executed.sum": 1_200_000.0,
    "smsp__inst_executed_pipe_fma.sum": 800_000.0, "smsp__inst_executed_pipe_alu.sum": 200_000.0,
    "smsp__inst_executed_pipe_xu.sum": 100_000.0, "smsp__inst_executed_pipe_lsu.sum": 40_000.0,
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 200_000.0,
    "dram__bytes_read.sum": 45e6, "dram__bytes_write.sum": 15e6, "lts__t_sectors.sum": 5e6,
}
LOW = {**ROW, "sm__warps_active.avg.pct_of_peak_sustained_active": 3.125}  # 2 warps


def test_components_at_full_throughput():
    t = qa_times(ROW, TOY)
    assert t["warps_per_sm"] == pytest.approx(32.0)  # 50% of 64
    # 32 warps hide every latency: T_c(32) = T_c. Seconds = N * 0.25 * 32 / (T * 1e9):
    # fp32 8e5 / 128 -> 50 us; int_logic 2e5 / 64 -> 25 us; sfu 1e5 / 16 -> 50 us;
    # warp (lsu) 4e4 / 32 -> 10 us; other 1.2e6 - 1.14e6 = 6e4 issued at 4 per clock:
    # 6e4 * 0.25 / 4e9 = 3.75 us; the pipeline is their sum, 138.75 us
    assert t["classes"] == pytest.approx({"fp32": 50e-6, "int_logic": 25e-6, "fp64": 0.0,
                                          "sfu": 50e-6, "warp": 10e-6, "other": 3.75e-6})
    assert t["pipeline"] == pytest.approx(138.75e-6)
    # shared: min(64 / 128, 32 / 20) = 0.5 wavefronts per clock; 2e5 * 0.25 / 0.5e9 = 100 us
    assert t["shared"] == pytest.approx(100e-6)
    # global: DRAM 60 MB at 350 GB/s (a quarter written) = 171.43 us; L2 160 us
    assert t["global"] == pytest.approx(60e6 / 350e9)
    assert t["l2"] == pytest.approx(160e-6)


def test_the_dominating_component_is_the_time():
    p = _prediction("qa", ROW, TOY, launch=True)
    assert p.seconds == pytest.approx(2e-6 + 60e6 / 350e9)
    assert p.based_on["dominant"] == "global" and p.bottleneck == "memory"
    assert _prediction("qa", ROW, TOY, launch=False).seconds == pytest.approx(60e6 / 350e9)


def test_low_occupancy_lowers_each_class_by_littles_law():
    t = qa_times(LOW, TOY)
    # W = 2: T_c(2) = min(T_c, 2 * 32 / L_c): fp32 min(128, 16) = 16 -> 8e5 * 8 / 16e9 = 400 us;
    # int_logic min(64, 32) = 32 -> 50 us; sfu min(16, 4) = 4 -> 200 us; warp min(32, 2)
    # = 2 -> 160 us; other 3.75 us: 813.75 us
    assert t["pipeline"] == pytest.approx(813.75e-6)
    # shared: min(0.5, 2 / 20) = 0.1 per clock -> 2e5 * 0.25 / 0.1e9 = 500 us
    assert t["shared"] == pytest.approx(500e-6)
    p = _prediction("qa", LOW, TOY, launch=True)
    assert p.seconds == pytest.approx(815.75e-6)
    assert p.based_on["dominant"] == "pipeline" and p.bottleneck == "compute"


def test_without_an_occupancy_counter_the_theoretical_one_is_used():
    from kerncast.models.zoo._components import machine

    h100 = machine("h100-sxm")
    row = {"threads_per_block": 256, "registers": 32}
    assert achieved_warps(row, h100) == pytest.approx(64.0)  # 8 blocks of 8 warps
    assert achieved_warps({"threads_per_block": 4096}, h100) == 64.0  # invalid: the most

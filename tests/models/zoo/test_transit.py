"""Transit's figure (Li et al.): a bottleneck analysis, not a registered time model."""

from __future__ import annotations

import pytest

from kerncast.models import list_predictors
from kerncast.models.zoo._transit import transit_figures
from tests.models.zoo.test_components import TOY

# 1000 global requests (800 loads, 200 stores), 10 instructions per request; half of the
# 64 warps resident; half of the sectors hit in L1, half of the rest in L2
ROW = {
    "sm__warps_active.avg.pct_of_peak_sustained_active": 50.0,
    "smsp__inst_executed.sum": 10_000.0, "smsp__inst_executed_pipe_fma.sum": 6_000.0,
    "smsp__inst_executed_op_global_ld.sum": 800.0, "smsp__inst_executed_op_global_st.sum": 200.0,
    "l1tex__t_sector_hit_rate.pct": 50.0, "lts__t_sector_hit_rate.pct": 50.0,
    "l1tex__t_sectors.sum": 16_000.0, "lts__t_sectors.sum": 8_000.0,
    "dram__bytes_read.sum": 96_000.0, "dram__bytes_write.sum": 32_000.0,
}


def test_demand_and_supply_of_each_resource():
    f = transit_figures(ROW, TOY)
    r = f["resources"]
    # DRAM: 128 KB / 1000 = 128 B per request; a quarter written: 350 GB/s / 4 SMs / 1 GHz
    # = 87.5 B per cycle -> 0.6836 requests per cycle
    assert r["dram"]["demand_per_request"] == pytest.approx(128.0)
    assert r["dram"]["supply_per_cycle"] == pytest.approx(87.5)
    assert r["dram"]["requests_per_cycle"] == pytest.approx(87.5 / 128)
    # L2: 8000 * 32 / 1000 = 256 B; 1 TB/s / 4 / 1 GHz = 250 B per cycle -> 0.9766
    assert r["l2"]["requests_per_cycle"] == pytest.approx(250 / 256)
    # L1: 16000 sectors = 4000 lines, 4 per request; 1 line per cycle -> 0.25
    assert r["l1"]["requests_per_cycle"] == pytest.approx(0.25)
    # issue: Z = 10 instructions per request, 4 per cycle -> 0.4; fma: 6 * 32 = 192 lanes
    # per request, 128 per cycle -> 0.667
    assert f["think_cycles"] == pytest.approx(10.0)
    assert r["issue"]["requests_per_cycle"] == pytest.approx(0.4)
    assert r["pipe_fma"]["requests_per_cycle"] == pytest.approx(128 / 192)
    assert f["supply"] == pytest.approx(0.25) and f["compute_supply"] == pytest.approx(0.4)


def test_too_few_warps_meet_the_supply_on_its_latency_slope():
    f = transit_figures(ROW, TOY)
    # L = 0.5 * 30 + 0.5 * (0.5 * 200 + 0.5 * 500) = 190 cycles; n = 32 warps
    assert f["latency_cycles"] == pytest.approx(190.0)
    assert f["n_warps"] == pytest.approx(32.0)
    # X* = min(32 / (10 + 190), 0.25, 0.4) = 0.16: latency; n* = 0.25 * 200 = 50 warps
    assert f["equilibrium"] == pytest.approx(0.16)
    assert f["regime"] == "latency" and f["bottleneck"] == "latency"
    assert f["n_saturate"] == pytest.approx(50.0)
    # the figure: demand falls from min(32 / 10, 0.4) = 0.4 to 0; supply rises from 0 to
    # min(32 / 190, 0.25) = 0.168 at k = n: it never reaches B
    assert f["curves"]["demand"][0] == pytest.approx(0.4)
    assert f["curves"]["demand"][-1] == pytest.approx(0.0)
    assert f["curves"]["supply"][-1] == pytest.approx(32 / 190)


def test_enough_warps_saturate_the_memory_system():
    f = transit_figures({**ROW, "sm__warps_active.avg.pct_of_peak_sustained_active": 100.0}, TOY)
    # 64 / 200 = 0.32 > B = 0.25: the L1 limits
    assert f["regime"] == "memory" and f["bottleneck"] == "l1"
    assert f["equilibrium"] == pytest.approx(0.25)
    assert "coalescing" in f["direction"]


def test_many_instructions_per_request_saturate_the_issue_slots():
    row = {**ROW, "smsp__inst_executed.sum": 100_000.0,
           "sm__warps_active.avg.pct_of_peak_sustained_active": 100.0}
    f = transit_figures(row, TOY)
    # Z = 100: C = 4 / 100 = 0.04 < 64 / 290 and < 0.25
    assert f["regime"] == "compute" and f["bottleneck"] == "issue"
    assert f["equilibrium"] == pytest.approx(0.04)


def test_no_global_requests_leaves_only_the_compute_side():
    f = transit_figures({"smsp__inst_executed.sum": 100.0}, TOY)
    assert f["regime"] == "compute" and f["curves"] == {}


def test_transit_is_not_registered_as_a_time_model():
    assert "transit" not in list_predictors()

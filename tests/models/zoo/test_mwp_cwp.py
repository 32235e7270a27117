"""Hong & Kim's MWP-CWP model (``mwp-cwp``) on hand-worked examples."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import kerncast
from kerncast.data import Dataset
from kerncast.models import get_predictor
from kerncast.models._base import LaunchInputs
from kerncast.models.zoo import _mwp_cwp as mc
from kerncast.models.zoo._mwp_cwp import MwpApplication, MwpCwp, MwpHardware, mwp_cwp

# The worked example's parameters (FX5600 figures: Mem_LD 420, Departure_del_uncoal 10,
# Departure_del_coal 4, 4 issue cycles; a 1 GHz clock and 80 GB/s for round numbers):
# 80 blocks of 128 threads, 5 blocks (20 warps) per SM on 16 SMs; per thread 27
# computation and 6 uncoalesced memory instructions (32 transactions each, 128 bytes a
# warp) and 6 barriers.
FX5600 = MwpHardware(issue_cycles=4, freq_hz=1e9, mem_bandwidth=80e9, mem_ld=420,
                     departure_del_coal=4, departure_del_uncoal=10, active_sms=16)
EXAMPLE = MwpApplication(comp_insts=27, coal_mem_insts=0, uncoal_mem_insts=6, synch_insts=6,
                         uncoal_per_mw=32, load_bytes_per_warp=128, blocks=80,
                         threads_per_block=128, active_blocks_per_sm=5)


# -- every equation on the worked example -------------------------------------------------

def test_memory_latency_equations():
    uncoal = mc.mem_l_uncoal(420, 32, 10)       # (10) 420 + 31 x 10 = 730
    coal = mc.mem_l_coal(420)                   # (11) 420
    wu, wc = mc.weight_uncoal(0, 6), mc.weight_coal(0, 6)  # (13), (14): 6/6 and 0/6
    assert (uncoal, coal, wu, wc) == (730, 420, 1.0, 0.0)
    assert mc.mem_l(uncoal, coal, wu, wc) == 730  # (12) 730 x 1 + 420 x 0
    assert mc.mem_l(730, 420, 0.25, 0.75) == pytest.approx(497.5)  # 182.5 + 315
    assert mc.departure_delay(10, 32, wu, 4, wc) == 320  # (15) 10 x 32 x 1 + 4 x 0
    assert mc.departure_delay(10, 32, 0.5, 4, 0.5) == 162  # 160 + 2


def test_mwp_equations():
    full = mc.mwp_without_bw_full(730, 320)     # (8) 730 / 320 = 2.28125
    assert full == 2.28125 and mc.mwp_without_bw(full, 20) == 2.28125  # (9)
    assert mc.mwp_without_bw(105.0, 20) == 20
    per_warp = mc.bw_per_warp(1e9, 128, 730)   # (7) 1e9 x 128 / 730 = 0.17534 GB/s
    assert per_warp == pytest.approx(175_342_465.75)
    peak = mc.mwp_peak_bw(80e9, per_warp, 16)  # (6) 80 / (0.17534 x 16) = 58,400 / 2,048
    assert peak == pytest.approx(28.515625)
    assert mc.mwp(full, peak, 20) == 2.28125    # (5) the least of 2.28, 28.5 and 20


def test_cwp_and_cycle_equations():
    comp = mc.comp_cycles(4, 27 + 6)            # (18) 4 x 33 = 132
    mem = mc.mem_cycles(730, 6, 420, 0)         # (19) 730 x 6 = 4,380
    assert (comp, mem) == (132, 4380)
    full = mc.cwp_full(mem, comp)               # (16) 4,512 / 132 = 34.18
    assert full == pytest.approx(34.181818) and mc.cwp(full, 20) == 20  # (17)
    assert mc.comp_period(comp, 6) == 22        # (2) 132 / 6
    assert mc.repetitions(80, 5, 16) == 1       # (20) 80 / (5 x 16)
    assert mc.repetitions(2000, 8, 132) == pytest.approx(2000 / 1056)


def test_execution_equations():
    # (1) CWP >= MWP: 4,380 x 20 / 2.28125 + 22 x 1.28125 = 38,400 + 28.1875
    assert mc.exec_cycles_memory_bound(4380, 20, 2.28125, 22) == pytest.approx(38_428.1875)
    # (3) MWP > CWP: 420 + 808 x 20
    assert mc.exec_cycles_compute_bound(420, 808, 20) == 16_580
    # (4) MWP == N == CWP: 2,520 + 132 + 22 x (2 - 1)
    assert mc.exec_cycles_not_enough_warps(2520, 132, 22, 2) == 2674
    assert mc.exec_cycles_app(38_428.1875, 3) == pytest.approx(115_284.5625)  # (21)
    synch = mc.synch_cost(320, 2.28125, 6, 5, 1)  # (22) 320 x 1.28125 x 6 x 5 x 1 = 12,300
    assert synch == pytest.approx(12_300)
    total = mc.exec_cycles_with_synch(38_428.1875, synch)  # (23) 50,728.1875
    assert total == pytest.approx(50_728.1875)
    # (24) 50,728.1875 / (33 x 128 / 32 x 80 / 16) = 50,728.1875 / 660
    assert mc.cpi(total, 33, 128, 32, 80, 16) == pytest.approx(76.8609, rel=1e-5)
    assert mc.seconds(50_728.1875, 1e9) == pytest.approx(50.7281875e-6)


def test_the_worked_example_end_to_end():
    r = mwp_cwp(EXAMPLE, FX5600)
    assert (r.n, r.mem_l, r.departure_delay, r.mwp) == (20, 730, 320, 2.28125)
    assert (r.comp_cycles, r.mem_cycles, r.cwp, r.rep) == (132, 4380, 20, 1)
    assert r.case == 2  # CWP 20 >= MWP 2.28: memory-bound
    assert r.exec_cycles_app == pytest.approx(38_428.1875)
    assert r.synch_cost == pytest.approx(12_300)
    assert r.seconds == pytest.approx(50_728.1875e-9)
    assert EXAMPLE.total_warps == 320 and EXAMPLE.total_insts == 33


# -- the three cases -------------------------------------------------------------------

def _app(**changes) -> MwpApplication:
    base = dict(comp_insts=27, coal_mem_insts=6, uncoal_mem_insts=0, synch_insts=0,
                uncoal_per_mw=1, load_bytes_per_warp=128, blocks=80, threads_per_block=128,
                active_blocks_per_sm=5)
    return MwpApplication(**{**base, **changes})


def test_case_one_too_few_warps():
    # one block of 64 threads: N = 2. Coalesced: Mem_L = 420, MWP_Without_BW_full =
    # 420 / 4 = 105 -> N = 2; MWP_peak_BW = 80e9 x 420 / (1e9 x 128 x 16) = 16.4; MWP = 2.
    # Comp 4 x 33 = 132, Mem 420 x 6 = 2,520, CWP_full = 2,652 / 132 = 20.1 -> N = 2.
    r = mwp_cwp(_app(threads_per_block=64, active_blocks_per_sm=1, blocks=16), FX5600)
    assert (r.n, r.mwp, r.cwp, r.case) == (2, 2, 2, 1)
    assert r.exec_cycles == 2674  # (4) 2,520 + 132 + 22 x 1
    assert r.exec_cycles_app == 2674  # 16 blocks on 16 SMs: one round


def test_case_two_memory_bound_by_bandwidth():
    # 8 blocks of 128 threads: N = 32. MWP = min(105, 16.40625, 32) = 16.40625 (the
    # bandwidth); CWP = 20.09 >= MWP. (1): 2,520 x 32 / 16.40625 + 22 x 15.40625
    r = mwp_cwp(_app(active_blocks_per_sm=8, blocks=128), FX5600)
    assert r.n == 32 and r.mwp == pytest.approx(16.40625) and r.mwp_peak_bw == r.mwp
    assert r.cwp == pytest.approx(2652 / 132) and r.case == 2
    assert r.exec_cycles == pytest.approx(4915.2 + 338.9375)


def test_case_three_compute_bound():
    # 200 computation and 2 coalesced memory instructions, N = 20: Mem_L 420, MWP =
    # min(105, 16.40625, 20) = 16.4; Comp 4 x 202 = 808, Mem 840, CWP = 1,648 / 808 = 2.04.
    # MWP > CWP and Comp < Mem: (3) 420 + 808 x 20 = 16,580
    r = mwp_cwp(_app(comp_insts=200, coal_mem_insts=2), FX5600)
    assert r.mwp == pytest.approx(16.40625) and r.cwp == pytest.approx(1648 / 808)
    assert r.case == 3 and r.exec_cycles == 16_580


def test_more_computation_than_memory_is_case_two_whatever_cwp():
    assert mc.exec_case(mwp_=16.0, cwp_=2.0, n=20, comp_cycles_=900, mem_cycles_=840) == 2
    assert mc.exec_case(mwp_=16.0, cwp_=2.0, n=20, comp_cycles_=800, mem_cycles_=840) == 3
    assert mc.exec_case(mwp_=20, cwp_=20, n=20, comp_cycles_=1, mem_cycles_=840) == 1


def test_a_kernel_without_memory_instructions():
    r = mwp_cwp(_app(coal_mem_insts=0, load_bytes_per_warp=0), FX5600)
    # no memory: Mem_L = Mem_LD, no bandwidth demand, MWP = N = 20, CWP_full = 1, and the
    # warp's 27 instructions (108 cycles) are one computation period. Comp > Mem, so
    # (1): 0 x 20 / 20 + 108 x 19 = 2,052
    assert (r.mem_cycles, r.mwp_peak_bw, r.mwp, r.cwp) == (0, math.inf, 20, 1)
    assert r.comp_period == 108 and r.case == 2 and r.exec_cycles == 108 * 19


# -- hardware parameters from a calibration ----------------------------------------------

def test_issue_cycles_weight_the_calibrated_pipes_by_the_mix():
    machine = SimpleNamespace(issue={"fp32": 1.0, "sfu": 8.0, "int_div": 2.0}, schedulers=4,
                              sequence={"int_div": 20}, measured_whole=frozenset())
    # fp32 10 x 1/4 + sfu 2 x 8/4 + ld_global 4 x 1/4 + int_div 1 x 2 x 20/4 = 17.5 cycles
    got = mc.issue_cycles(machine, ["fp32", "sfu", "ld_global", "int_div"],
                          np.array([10, 2, 4, 1]))
    assert got == pytest.approx(17.5 / 17)


def test_departure_delays_invert_the_gather_curve():
    machine = SimpleNamespace(calibration=SimpleNamespace(
        curves={"l1_gather_lines_per_clk_sm_vs_lines": [[1, 0.5], [4, 1.0]]}))
    # one line: 0.5 lines a cycle -> 2 cycles; 2 lines: halfway in log-log, sqrt(0.5)
    assert mc.departure_delays(machine, 2) == pytest.approx((2.0, 2 ** 0.5))
    assert mc.departure_delays(machine, 32)[1] == pytest.approx(1.0)  # past the curve


def test_h100_hardware_parameters_come_from_its_calibration():
    from kerncast.sim import machine_for

    machine = machine_for("h100")
    # the shipped H100 calibration: 0.4216 lines a cycle for one-line requests, 0.9956 for
    # 32-line ones
    coal, uncoal = mc.departure_delays(machine, 32)
    assert coal == pytest.approx(1 / 0.4216) and uncoal == pytest.approx(1 / 0.9956)
    # fp32 runs one warp instruction a cycle on each of the 4 schedulers
    assert mc.issue_cycles(machine, ["fp32"], np.array([1])) == 0.25


# -- application parameters from the emulator's trace -------------------------------------

STRIDED = ('extern "C" __global__ void strided(float *out, const float *in, int stride) {\n'
           '    int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
           '    float v = in[i * stride];\n'
           '    __syncthreads();\n'
           '    out[i] = v;\n}\n')


def _strided_launch() -> tuple:
    kernel = kerncast.Kernel.of("strided", STRIDED)
    launch = kerncast.Launch(4, 64, args=(kerncast.Array("float32", 256),
                                          kerncast.Array("float32", 8192), np.int32(32)))
    return kernel, launch


@pytest.mark.toolchain
def test_parameters_of_a_strided_load_and_a_coalesced_store():
    app, hw, based_on = mc.launch_parameters(*_strided_launch(), "h100")
    # each warp: one load whose 32 lanes are 128 bytes apart (32 lines, 32 sectors), one
    # store of 32 consecutive words (1 line, 4 sectors), one barrier
    assert (app.coal_mem_insts, app.uncoal_mem_insts, app.synch_insts) == (1, 1, 1)
    assert app.uncoal_per_mw == 32
    assert app.load_bytes_per_warp == (32 + 4) * 32 / 2
    assert app.comp_insts > 0
    # 4 blocks of 2 warps on 132 SMs: one block per SM on 4 SMs
    assert (app.active_blocks_per_sm, app.active_warps_per_sm, hw.active_sms) == (1, 2, 4)
    assert hw.mem_ld == 692.9 and hw.departure_del_uncoal == pytest.approx(1 / 0.9956)
    assert based_on["device"] == "h100-sxm" and based_on["emulated_blocks"] == 1


@pytest.mark.toolchain
def test_explains_a_users_launch_with_the_case():
    kernel, launch = _strided_launch()
    p = MwpCwp().explain_launch(kernel, launch, LaunchInputs(device="h100"))
    r = p.based_on["equations"]
    assert p.model == "mwp-cwp" and p.seconds > 0 and p.based_on["configuration"]
    # N = 2: MWP = CWP = N, too few warps to hide anything
    assert (r["n"], r["mwp"], r["cwp"], p.based_on["case"]) == (2, 2, 2, 1)
    assert p.seconds == pytest.approx(r["seconds"] + p.breakdown["launch"])
    # the round is shorter than the calibrated launch cost; without it, latency limits
    assert p.breakdown["launch"] == 3.073e-6 and p.bottleneck == "launch"
    alone = MwpCwp(launch=False).explain_launch(kernel, launch, LaunchInputs(device="h100"))
    assert alone.bottleneck == "latency" and "launch" not in alone.breakdown


# -- the predictor on dataset rows ---------------------------------------------------------

def _row(kernel: str = "copy_vector", **tunables) -> dict:
    return {"kernel": kernel, "language": "cuda", "size": "small", "config": "",
            "tunables": json.dumps(tunables or {"bx": 256, "vec": 1}), "device": "h100-sxm",
            "sm_count": 132, "status": "ok"}


def test_is_registered_with_what_it_needs():
    assert isinstance(get_predictor("mwp-cwp"), MwpCwp)
    assert MwpCwp.needs == frozenset({"source", "spec"}) and not MwpCwp.learned


@pytest.mark.toolchain
def test_predicts_a_corpus_row_with_memory_and_compute_parts():
    data = Dataset(times=pd.DataFrame([_row()]))
    (p,) = MwpCwp().fit(data).explain(data)
    r = p.based_on["equations"]
    f = p.based_on["hardware"]["freq_hz"]
    assert p.breakdown["memory"] == pytest.approx(r["mem_cycles"] * r["n"] / r["mwp"] * r["rep"] / f)
    assert p.breakdown["compute"] == pytest.approx(r["comp_cycles"] * r["n"] * r["rep"] / f)
    (alone,) = MwpCwp(launch=False).fit(data).explain(data)
    assert alone.bottleneck == mc.CASES[alone.based_on["case"]][1]
    assert p.seconds - alone.seconds == pytest.approx(3.073e-6)


def test_rows_it_cannot_predict_are_nan_with_the_reason():
    data = Dataset(times=pd.DataFrame([_row("not_in_the_corpus")]))
    (p,) = MwpCwp().fit(data).explain(data)
    assert math.isnan(p.seconds) and "not_in_the_corpus" in p.based_on["error"]

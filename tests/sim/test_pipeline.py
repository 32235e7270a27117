"""The warp-pipeline simulation of one SM's round, on hand-made instruction tables.

Each test builds a small program (one :class:`Op` per pc, costed from the H100's
calibration) and per-warp streams of pcs, and checks a relation the timing model must
keep: dependent chains pay the latency, enough warps hide it until the schedulers'
issue rate binds, pipes and DRAM bandwidth limit throughput, barriers hold a block.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np
import pytest

from kerncast.emu import emulate
from kerncast.ptx import parse, read_registers, written_registers
from kerncast.sim import machine_for
from kerncast.sim._machine import PIPES
from kerncast.sim._memory import RequestCost
from kerncast.sim._pipeline import (BRANCH_PREDICATE_CYCLES, FP64_SHADOW, K_ALU, K_BAR, K_MEM,
                                    SPREAD_PAGES, TAKEN_BRANCH_CYCLES, WINDOWS, Op, _Dram,
                                    build_table, order_statistics, rotate_streams,
                                    sample_streams, simulate_round)
from kerncast.trace import KINDS, SPACES

LOAD, STORE = KINDS.index("load"), KINDS.index("store")
GLOBAL = SPACES.index("global")
N = 200  # instructions per warp in most tests


@pytest.fixture(scope="module")
def machine():
    return machine_for("h100")


def _alu(machine, cls="fp32", srcs=(), dsts=()) -> Op:
    return Op(K_ALU, PIPES.index(machine.pipe_of[cls]), machine.issue[cls], 1,
              machine.latency[cls], tuple(srcs), tuple(dsts))


def _mem(srcs=(), dsts=()) -> Op:
    return Op(K_MEM, PIPES.index("lsu"), 1.0, 1, 0.0, tuple(srcs), tuple(dsts))


def _bar() -> Op:
    return Op(K_BAR, PIPES.index("ctrl"), 1.0, 1, 1.0, (), ())


def _nregs(table) -> int:
    return 1 + max((r for op in table for r in op.srcs + op.dsts), default=0)


def _run(machine, streams, table, costs=None, *, wpb=1, active=132, l1=200 * 1024,
         l2=400 * 1024, **kw):
    """Simulate ``streams`` (lists of pcs; request keys use step 0 and the warp's index)."""
    arrays = [(np.asarray(p, np.int64), np.zeros(len(p), np.int64)) for p in streams]
    return simulate_round(arrays, table, _nregs(table), costs or {}, machine,
                          active_sms=active, warps_per_block=wpb, l1_bytes=l1,
                          l2_share_bytes=l2, **kw)


# -- compute -----------------------------------------------------------------------------

def test_dependent_chain_costs_latency_times_length(machine):
    chain = [_alu(machine, srcs=(0,), dsts=(0,))]
    result = _run(machine, [[0] * N], chain)
    assert result.cycles == pytest.approx(N * machine.latency["fp32"], rel=0.02)
    assert result.instructions == N and result.scale == 1.0


def test_fp64_chain_is_slower_than_fp32_chain_by_the_latency_ratio(machine):
    fp32 = _run(machine, [[0] * N], [_alu(machine, "fp32", (0,), (0,))]).cycles
    fp64 = _run(machine, [[0] * N], [_alu(machine, "fp64", (0,), (0,))]).cycles
    assert fp64 / fp32 == pytest.approx(machine.latency["fp64"] / machine.latency["fp32"],
                                        rel=0.05)


def test_independent_instructions_issue_one_per_cycle(machine):
    table = [_alu(machine, dsts=(i,)) for i in range(N)]
    result = _run(machine, [list(range(N))], table)
    assert N <= result.cycles <= N + machine.latency["fp32"] + 2


@pytest.mark.parametrize("factor", [2, 4])
def test_compute_cycles_scale_with_instruction_count(machine, factor):
    chain = [_alu(machine, srcs=(0,), dsts=(0,))]
    warps = 8
    short = _run(machine, [[0] * N] * warps, chain).cycles
    long = _run(machine, [[0] * (factor * N)] * warps, chain).cycles
    assert long / short == pytest.approx(factor, rel=0.02)


def test_more_warps_hide_latency_until_issue_bound(machine):
    """Warps on the same scheduler overlap their chains: the round takes the chain's
    latency while a scheduler has fewer warps than the latency covers, then grows with
    the warps (one instruction per scheduler per cycle)."""
    chain = [_alu(machine, srcs=(0,), dsts=(0,))]
    latency, schedulers = machine.latency["fp32"], machine.schedulers
    cycles = {w: _run(machine, [[0] * N] * w, chain).cycles for w in (1, 4, 8, 16, 32, 64)}
    # latency-bound: up to latency/issue warps per scheduler cost no more than one warp
    for w in (4, 8, 16):
        assert cycles[w] == pytest.approx(cycles[1], rel=0.02)
    # issue-bound: N instructions per warp, w / schedulers warps per scheduler
    for w in (32, 64):
        assert cycles[w] == pytest.approx(N * w / schedulers, rel=0.02)
    rates = [w * N / cycles[w] for w in sorted(cycles)]
    assert all(b >= a for a, b in zip(rates, rates[1:]))
    assert max(rates) <= schedulers / machine.issue["fp32"] * 1.001
    assert cycles[1] == pytest.approx(N * latency, rel=0.02)


def test_a_half_rate_pipe_halves_throughput(machine):
    """fp64 FMAs occupy their pipe for two cycles per warp instruction on the H100."""
    assert machine.issue["fp64"] == 2 * machine.issue["fp32"]
    warps = 32
    fp32 = [_alu(machine, "fp32", dsts=(i,)) for i in range(N)]
    fp64 = [_alu(machine, "fp64", dsts=(i,)) for i in range(N)]
    t32 = _run(machine, [list(range(N))] * warps, fp32)
    t64 = _run(machine, [list(range(N))] * warps, fp64)
    assert t64.cycles == pytest.approx(2 * t32.cycles, rel=0.03)
    per_scheduler = N * warps / machine.schedulers
    assert t64.busy["fp64"] == pytest.approx(per_scheduler * machine.issue["fp64"])
    assert t32.busy["fma"] == pytest.approx(per_scheduler * machine.issue["fp32"])
    assert t32.busy["fp64"] == 0.0


@pytest.mark.parametrize("fp64, others", [(4, 0), (4, 3), (4, 7), (8, 5), (16, 3), (16, 11)])
def test_an_fp64_instruction_leaves_a_third_of_its_second_cycle_to_others(machine, fp64,
                                                                           others):
    """A loop trip of D FP64 instructions and N others takes 2D + max(0, N - 0.35 D)
    cycles a warp per scheduler, as tools/fp64_issue_probe.py measured on an H200."""
    assert machine.issue["fp64"] == 2 and machine.issue["int"] == 1
    table = [_alu(machine, "fp64", dsts=(i,)) for i in range(fp64)] + \
        [_alu(machine, "int", dsts=(fp64 + i,)) for i in range(others)]
    trips, warps = 40, 64
    result = _run(machine, [list(range(len(table))) * trips] * warps, table)
    per_trip = result.cycles / (trips * warps / machine.schedulers)
    assert per_trip == pytest.approx(2 * fp64 + max(0.0, others - FP64_SHADOW * fp64),
                                     rel=0.05)


def test_an_instruction_holds_every_pipe_its_sass_needs(machine):
    """An integer multiply-add takes the FP32 pair and its heavy half: integer ALU
    instructions beside it run at the ALU's own rate, a second multiply waits for the
    heavy half."""
    alu, fma, heavy = (PIPES.index(p) for p in ("alu", "fma", "fma_heavy"))
    warps = 32
    imad = Op(K_ALU, heavy, 2.0, 1, 4.0, (), (0,), ((fma, 1.0),))
    add = Op(K_ALU, alu, 2.0, 1, 4.0, (), (1,))
    ffma = Op(K_ALU, fma, 1.0, 1, 4.0, (), (2,))
    mixed = _run(machine, [[0, 1] * N] * warps, [imad, add])
    per_scheduler = N * warps / machine.schedulers
    # each pipe takes two cycles a warp instruction and they overlap: two per two cycles
    assert mixed.cycles == pytest.approx(2 * per_scheduler, rel=0.03)
    assert mixed.busy["fma"] == pytest.approx(per_scheduler)
    assert mixed.busy["fma_heavy"] == pytest.approx(2 * per_scheduler)
    # FFMAs take the pair's other half while the multiplies hold the heavy one
    with_fp32 = _run(machine, [[0, 1] * N] * warps, [imad, ffma])
    assert with_fp32.cycles == pytest.approx(2 * per_scheduler, rel=0.03)
    only_imad = _run(machine, [[0, 0] * N] * warps, [imad])
    assert only_imad.cycles == pytest.approx(4 * per_scheduler, rel=0.03)


def test_simulation_is_deterministic(machine):
    table = [_alu(machine, "fp32", (0,), (1,)), _alu(machine, "sfu", (1,), (0,)),
             _mem((0,), (2,)), _alu(machine, "int", (2,), (0,))]
    costs = {(w, 0, 2): RequestCost(LOAD, GLOBAL, tuple(range(w * 4, w * 4 + 4)), 1, 1, 1.0)
             for w in range(12)}
    streams = [[0, 1, 2, 3] * 20] * 12
    first = _run(machine, streams, table, costs, wpb=4)
    second = _run(machine, streams, table, costs, wpb=4)
    assert first == second
    assert first.cycles > 0 and first.instructions == 12 * 80


# -- barriers ----------------------------------------------------------------------------

def test_barrier_holds_a_block_until_its_slowest_warp_arrives(machine):
    """Warp 0 runs a long chain before the barrier, warp 1 reaches it at once: in one
    block warp 1 waits for the chain; in separate blocks it does not."""
    table = [_alu(machine, srcs=(0,), dsts=(0,)), _bar(), _alu(machine, dsts=(1,))]
    slow, fast = [0] * N + [1, 2], [1, 2]
    chain = N * machine.latency["fp32"]
    together = _run(machine, [slow, fast], table, wpb=2)
    apart = _run(machine, [slow, fast], table, wpb=1)
    assert together.barrier_wait >= chain
    assert together.barrier_wait == pytest.approx(chain + 2 * machine.barrier_cycles(2),
                                                  abs=0.05 * chain)
    assert apart.barrier_wait == pytest.approx(2 * machine.barrier_cycles(1), abs=4)
    assert together.cycles >= chain + machine.barrier_cycles(2)


def test_barrier_cost_grows_with_the_warps_of_a_block(machine):
    table = [_bar()]
    small = _run(machine, [[0] * 10] * 2, table, wpb=2)
    large = _run(machine, [[0] * 10] * 32, table, wpb=32)
    assert machine.barrier_cycles(32) > machine.barrier_cycles(2)
    assert large.cycles > small.cycles
    assert small.cycles >= 10 * machine.barrier_cycles(2)


# -- memory ------------------------------------------------------------------------------

def _load_then_use(machine):
    return [_mem(dsts=(0,)), _alu(machine, "int", (0,), (1,))]


def _one_load(share: float) -> dict:
    return {(0, 0, 0): RequestCost(LOAD, GLOBAL, (0, 1, 2, 3), 1, 1, share)}


def test_a_load_costs_the_latency_of_the_level_it_reaches(machine):
    table = _load_then_use(machine)
    dram = _run(machine, [[0, 1]], table, _one_load(1.0)).cycles
    l2 = _run(machine, [[0, 1]], table, _one_load(0.0)).cycles
    assert dram >= machine.dram_latency
    assert machine.l2_latency <= l2 < machine.dram_latency
    # a block of one warp reads at the mean of the calibrated spread
    assert dram - l2 == pytest.approx(machine.dram_latency - machine.l2_latency, rel=0.05)


def test_a_block_waits_for_the_slowest_of_its_warps_dram_reads(machine, monkeypatch):
    """Each read draws its own latency from the calibrated spread: the more warps a block
    has, the later its last one ends, while the mean latency stays the calibrated one."""
    table = _load_then_use(machine)
    spread = machine.dram_spread()
    assert spread is not None and abs(np.mean(spread[0])) < 1.0

    def last_end(warps: int) -> float:
        costs = {(w, 0, 0): RequestCost(LOAD, GLOBAL, (4 * w, 4 * w + 1, 4 * w + 2, 4 * w + 3),
                                        1, 1, 1.0) for w in range(warps)}
        streams = [(np.array([0, 1]), np.zeros(2, np.int64)) for _ in range(warps)]
        return simulate_round(streams, table, _nregs(table), costs, machine, active_sms=1,
                              warps_per_block=warps, l1_bytes=200 * 1024,
                              l2_share_bytes=400 * 1024, source=list(range(warps))).cycles

    one, eight, thirty_two = last_end(1), last_end(8), last_end(32)
    assert one < eight < thirty_two
    # the latest of 32 reads lies in the spread's top quantiles
    assert thirty_two - one >= order_statistics(spread[0], 32)[0, -1] - 30
    monkeypatch.setattr(type(machine), "dram_spread", lambda self: None)
    assert last_end(32) < thirty_two


def test_a_request_waits_for_the_latest_of_its_dram_pages_not_of_its_lines(machine):
    """Lines of one 1 KiB DRAM page arrive together; lines in pages of their own are
    draws of their own. Eight warps each read four lines: next to each other (one page),
    or each line in a page of its own."""
    from kerncast.sim._loop import PAGE_SECTORS, dram_pages

    table = _load_then_use(machine)

    def last_end(gap: int) -> float:  # sectors between a request's lines
        costs = {(w, 0, 0): RequestCost(
            LOAD, GLOBAL, tuple(sorted(4096 * w + gap * k + s for k in range(4)
                                       for s in range(4))), 4, 1, 1.0) for w in range(8)}
        streams = [(np.array([0, 1]), np.zeros(2, np.int64)) for _ in range(8)]
        return simulate_round(streams, table, _nregs(table), costs, machine, active_sms=1,
                              warps_per_block=8, l1_bytes=200 * 1024,
                              l2_share_bytes=400 * 1024, source=list(range(8))).cycles

    adjacent, apart = last_end(4), last_end(PAGE_SECTORS)
    assert adjacent < apart
    sectors = np.array([0, 1, 4, 5, 31, 32, 63, 64, 200], np.int64)
    assert dram_pages(sectors, 0, len(sectors)) == 4  # pages 0, 1, 2 and 6
    assert dram_pages(sectors, 2, 4) == 1
    assert dram_pages(sectors, 3, 3) == 0


def test_a_reload_hits_in_l1(machine):
    table = _load_then_use(machine) + [_mem(dsts=(2,)), _alu(machine, "int", (2,), (3,))]
    sectors = (0, 1, 2, 3)
    costs = {(0, 0, 0): RequestCost(LOAD, GLOBAL, sectors, 1, 1, 1.0),
             (0, 0, 2): RequestCost(LOAD, GLOBAL, sectors, 1, 1, 1.0)}
    once = _run(machine, [[0, 1]], table, costs).cycles
    twice = _run(machine, [[0, 1, 2, 3]], table, costs)
    assert twice.cycles - once <= machine.l1_latency + 10
    assert twice.caches["l1_hits"] == 4


def _streaming_costs(warps: int, loads: int) -> tuple[dict, list[list[int]], list[Op]]:
    """Every warp loads ``loads`` distinct 128-byte lines (independent loads)."""
    table = [_mem(dsts=(i,)) for i in range(loads)]
    costs = {}
    for w in range(warps):
        for i in range(loads):
            first = (w * loads + i) * 4
            costs[(w, 0, i)] = RequestCost(LOAD, GLOBAL, tuple(range(first, first + 4)), 1, 1,
                                           1.0)
    return costs, [list(range(loads))] * warps, table


def test_a_busy_drams_latency_grows_along_the_calibrated_curve():
    h200 = machine_for("h200")  # the device with the loaded-latency probe
    shares, cycles, _ = h200.dram_load_latency()
    window = h200.dram_latency
    for busy in (0.3, 0.64, 0.8):
        dram = _Dram(1.0, 1.0, 1.0, (shares, cycles), window)  # a byte a cycle
        for t in np.arange(0.0, 50 * window, 12.5):  # busy that share of the time
            dram.transfer(float(t), 12.5 * busy)
        assert dram.added_latency() == pytest.approx(np.interp(busy, shares, cycles), rel=0.05)
    idle = _Dram(1.0, 1.0, 1.0, (shares, cycles), window)
    idle.transfer(0.0, 4.0)
    assert idle.added_latency() == 0.0
    assert _Dram(1.0, 1.0, 1.0).added_latency() == 0.0  # no curve: no growth


def test_streaming_loads_wait_longer_on_a_loaded_dram(monkeypatch):
    h200 = machine_for("h200")
    # 64 warps that each keep one line in flight (every load waits for the one before):
    # about two thirds of this SM's share of the DRAM, a steady load and no burst
    costs, streams, _ = _streaming_costs(64, 20)
    table = [_mem(srcs=(i - 1,) if i else (), dsts=(i,)) for i in range(20)]
    loaded = _run(h200, streams, table, costs, active=132).cycles
    monkeypatch.setattr(type(h200), "dram_load_latency", lambda self: None)
    plain = _run(h200, streams, table, costs, active=132).cycles
    assert loaded > plain + 50


def test_streaming_loads_run_at_this_sms_share_of_dram_bandwidth(machine):
    warps, loads = 64, 40
    costs, streams, table = _streaming_costs(warps, loads)
    result = _run(machine, streams, table, costs, active=132)
    nbytes = warps * loads * 128
    read = machine.dram_rates()[0]  # loads alone move at the calibrated read rate
    per_sm = min(read / 132, machine.sm_dram_bytes_per_cycle())
    assert result.dram_bytes == pytest.approx(nbytes)
    assert result.cycles >= nbytes / per_sm * (1 - 1e-9)
    assert result.cycles == pytest.approx(nbytes / per_sm, rel=0.1)


def test_an_even_mix_of_dram_reads_and_writes_runs_at_the_copy_rate(machine):
    warps, pairs = 64, 20
    table = [_mem(dsts=(0,)), _mem(srcs=(1,))]
    costs = {}
    for w in range(warps):
        for i in range(pairs):
            first = (w * pairs + i) * 8
            costs[(w, 0, 0 + 2 * i)] = RequestCost(LOAD, GLOBAL, tuple(range(first, first + 4)),
                                                   1, 1, 1.0)
            costs[(w, 0, 1 + 2 * i)] = RequestCost(STORE, GLOBAL,
                                                   tuple(range(first + 4, first + 8)), 1, 1, 1.0)
    table = [table[i % 2] for i in range(2 * pairs)]
    result = _run(machine, [list(range(2 * pairs))] * warps, table, costs, active=132)
    read, write, copy = machine.dram_rates()
    assert copy < min(read, write)  # the H100's calibration: turnarounds cost
    nbytes = warps * pairs * 256
    assert result.dram_bytes == pytest.approx(nbytes)
    assert result.cycles == pytest.approx(nbytes / (copy / 132), rel=0.05)


def test_fewer_active_sms_leave_each_more_bandwidth(machine):
    costs, streams, table = _streaming_costs(64, 40)
    crowded = _run(machine, streams, table, costs, active=132).cycles
    alone = _run(machine, streams, table, costs, active=16).cycles
    # one SM cannot draw more than its own limit, however few SMs share the DRAM
    ratio = min(machine.dram_bytes_per_cycle() / 16, machine.sm_dram_bytes_per_cycle()) / \
        (machine.dram_bytes_per_cycle() / 132)
    assert alone < crowded
    assert crowded / alone == pytest.approx(ratio, rel=0.15)


def test_data_that_fits_in_the_l2_share_is_read_from_dram_once(machine):
    """Every warp reads its own 32 KiB twice, 512 KiB in all (far more than the L1
    holds): with all of it inside this SM's L2 share the second pass hits, with a share
    smaller than the data read between the two passes DRAM serves both."""
    warps, loads = 16, 256
    region = warps * loads * 4  # sectors
    table = [_mem(dsts=(i % 8,)) for i in range(2 * loads)]
    costs = {}
    for w in range(warps):
        for i in range(2 * loads):
            first = (w * loads + i % loads) * 4
            costs[(w, 0, i)] = RequestCost(LOAD, GLOBAL, tuple(range(first, first + 4)), 1, 1,
                                           1.0)
    streams = [list(range(2 * loads))] * warps
    fits = _run(machine, streams, table, costs, l1=16 * 1024, l2=2 * region * 32)
    spills = _run(machine, streams, table, costs, l1=16 * 1024, l2=region * 32 // 16)
    assert fits.dram_bytes == pytest.approx(region * 32)
    assert spills.dram_bytes == pytest.approx(2 * region * 32)
    assert fits.caches["l2_hits"] > spills.caches["l2_hits"]
    assert fits.cycles < 0.75 * spills.cycles


def test_stores_do_not_stall_the_warp_but_their_bytes_take_time(machine):
    warps, stores = 32, 40
    table = [_mem(srcs=(0,))] * stores
    costs = {(w, 0, i): RequestCost(STORE, GLOBAL, tuple(range((w * stores + i) * 4,
                                                               (w * stores + i) * 4 + 4)),
                                    1, 1, 1.0)
             for w in range(warps) for i in range(stores)}
    result = _run(machine, [list(range(stores))] * warps, table, costs)
    nbytes = warps * stores * 128
    write = machine.dram_rates()[1]  # stores alone move at the calibrated write rate
    per_sm = min(write / 132, machine.sm_dram_bytes_per_cycle())
    assert result.dram_bytes == pytest.approx(nbytes)
    assert result.cycles >= nbytes / per_sm * (1 - 1e-9)
    # a single store issues and the warp moves on: no memory latency on the chain
    one = _run(machine, [[0, 1]], [_mem(), _alu(machine, dsts=(1,))],
               {(0, 0, 0): RequestCost(STORE, GLOBAL, (0,), 1, 1, 1.0)})
    assert one.cycles < machine.l2_latency


def _scattered_stores(lines_apart: bool, nbytes: int, warps: int = 16, stores: int = 20):
    """Each warp's ``stores`` stores write 32 sectors, each in its own line (a naive
    transpose's column) or four to a line (coalesced), ``nbytes`` in all per store."""
    costs = {}
    for w in range(warps):
        for i in range(stores):
            first = (w * stores + i) * 32 * (4 if lines_apart else 1)
            step = 4 if lines_apart else 1
            sectors = tuple(range(first, first + 32 * step, step))
            costs[(w, 0, i)] = RequestCost(STORE, GLOBAL, sectors, 32 if lines_apart else 8,
                                           1, 0.0, nbytes=nbytes)
    return [list(range(stores))] * warps, [_mem(srcs=(0,))] * stores, costs


def test_scattered_partial_stores_take_the_calibrated_store_rate(machine):
    pieces, rates = machine.partial_store_rates()
    streams, table, costs = _scattered_stores(True, 32 * 4)
    result = _run(machine, streams, table, costs)
    sectors = 16 * 20 * 32
    assert result.cycles >= sectors / rates[0] * (1 - 1e-9)  # 4-byte pieces
    assert result.busy["lsu"] == pytest.approx(sectors / rates[0], rel=1e-6)
    # the same sectors written whole, or four to a line, go at the line rate
    whole = _run(machine, *_scattered_stores(True, 32 * 32))
    coalesced = _run(machine, *_scattered_stores(False, 32 * 4))
    assert whole.busy["lsu"] == pytest.approx(sectors, rel=1e-6)
    assert coalesced.busy["lsu"] < sectors
    assert result.cycles > 1.5 * whole.cycles


def test_store_rate_interpolates_in_the_piece_size(machine):
    from kerncast.sim._pipeline import _partial_store_cycles

    rates = ((4.0, 8.0, 16.0), (0.2, 0.18, 0.16))
    assert _partial_store_cycles(rates, 32, 4.0) == pytest.approx(32 / 0.2)
    assert _partial_store_cycles(rates, 32, 12.0) == pytest.approx(32 / 0.17)
    assert _partial_store_cycles(rates, 32, 2.0) == pytest.approx(32 / 0.2)    # clamped
    assert _partial_store_cycles(rates, 32, 24.0) == pytest.approx(32 / 0.16)


def test_a_calibration_without_the_store_curve_borrows_its_architectures(machine):
    from dataclasses import replace

    from kerncast.calibrate import STORE_CURVE, load_calibration

    own = load_calibration("h200")
    assert own.curves.get(STORE_CURVE) and machine_for("h200").store_curve_source() == "h200"
    without = replace(own, curves={k: v for k, v in own.curves.items() if k != STORE_CURVE})
    h200 = machine_for("h200", without)
    assert h200.partial_store_rates() == machine.partial_store_rates()
    assert h200.store_curve_source() == "h100-sxm" == machine.store_curve_source()


# -- long streams ------------------------------------------------------------------------

def test_long_streams_are_sampled_and_extrapolated(machine):
    table = [_alu(machine, "fp32", (i % 4,), (i % 4,)) for i in range(8)]
    streams = [list(range(8)) * 500] * 16  # 64,000 instructions
    full = _run(machine, streams, table, budget=10**6)
    sampled = _run(machine, streams, table, budget=8_000)
    assert full.scale == 1.0 and sampled.scale == pytest.approx(8.0, rel=0.05)
    assert sampled.instructions == full.instructions == 64_000
    assert sampled.cycles == pytest.approx(full.cycles, rel=0.05)
    assert sampled.busy["fma"] == pytest.approx(full.busy["fma"], rel=0.01)


def test_streams_as_long_share_their_median_pace():
    from types import SimpleNamespace

    from kerncast.sim._pipeline import _shared_paces

    sim = SimpleNamespace(source=[0, 0, 0, 1, 1], warps_per_block=2, table=[])
    streams = [([0] * 100, None)] * 4 + [([0] * 50, None)]
    paces = _shared_paces(sim, {0: 10.0, 1: 12.0, 2: 60.0, 3: 11.0, 4: 40.0}, streams)
    # warps 0-3 issue 100 instructions each: the one left behind by the scheduler (2)
    # takes the others' pace, whichever traced warp each copies; warp 4 runs half as far
    # and keeps its own
    assert paces == {0: 11.5, 1: 11.5, 2: 11.5, 3: 11.5, 4: 40.0}


def test_one_slow_traced_warp_does_not_set_the_round():
    """Every warp of the round a traced warp of its own (8 warps a block): the one the
    scheduler left behind over the sampled span no longer bounds the round."""
    from types import SimpleNamespace

    from kerncast.sim._pipeline import _shared_paces

    n = 8
    sim = SimpleNamespace(source=list(range(n)), warps_per_block=8, table=[])
    measured = {w: 10.0 for w in range(n)} | {5: 50.0}
    paces = _shared_paces(sim, measured, [([0] * 1000, None)] * n)
    assert set(paces.values()) == {10.0}


def test_warps_of_a_block_that_meet_at_barriers_share_one_pace():
    from types import SimpleNamespace

    from kerncast.sim._pipeline import K_BAR, Op, _shared_paces

    # traced warps 0, 1 are one block, 2, 3 another; warp 3's stream is shorter
    source, streams = [0, 1, 2, 3, 0, 1], [([0] * 100, None)] * 3 + [([0] * 60, None)] * 1 \
        + [([0] * 100, None)] * 2
    measured = {0: 10.0, 1: 14.0, 2: 9.0, 3: 30.0, 4: 11.0, 5: 13.0}
    free = SimpleNamespace(source=source, warps_per_block=2, table=[])
    assert _shared_paces(free, measured, streams) == {0: 11.0, 1: 11.0, 2: 11.0, 3: 30.0,
                                                      4: 11.0, 5: 11.0}
    coupled = SimpleNamespace(source=source, warps_per_block=2,
                              table=[Op(K_BAR, 0, 1.0, 1, 0.0, (), ())])
    # block 0's four warps take one pace; warps of another block or length keep theirs
    assert _shared_paces(coupled, measured, streams) == {0: 12.0, 1: 12.0, 2: 9.0, 3: 30.0,
                                                         4: 12.0, 5: 12.0}


# -- tables from real PTX ----------------------------------------------------------------

CHAIN = """.version 8.0
.target sm_90
.address_size 64
.visible .entry chain(.param .u64 out, .param .f32 m, .param .f32 c)
{
.reg .f32 %f<4>; .reg .u64 %rd<4>; .reg .u32 %r<2>;
ld.param.f32 %f2, [m]; ld.param.f32 %f3, [c];
mov.f32 %f1, 0f3F800000;
""" + "fma.rn.f32 %f1, %f1, %f2, %f3;\n" * 64 + """ld.param.u64 %rd1, [out];
mov.u32 %r1, %tid.x; mul.wide.u32 %rd2, %r1, 4; add.u64 %rd3, %rd1, %rd2;
st.global.f32 [%rd3], %f1;
ret;
}
"""


def _emulated(ptx: str, threads: int):
    out = np.zeros(threads, np.float32)
    return emulate(parse(ptx), ((1,), (threads,)), [out, np.float32(0.5), np.float32(1.0)])


def _streams(trace):
    out = []
    for _, ws in sorted(trace.streams().items()):
        out.append((ws.pcs(), np.repeat(ws.order, ws.end - ws.start)))
    return out


def test_table_of_an_fma_chain_from_ptx(machine):
    trace = _emulated(CHAIN, 32).trace
    table, nregs, _ = build_table(trace.program, machine)
    assert len(table) == len(trace.program.items)
    fma = [op for op, item in zip(table, trace.program.items)
           if item.kind == "op" and item.instr.opcode == "fma"]
    assert len(fma) == 64
    assert all(op.latency == machine.latency["fp32"] and op.kind == K_ALU for op in fma)
    result = simulate_round(_streams(trace), table, nregs, {}, machine, active_sms=1,
                            warps_per_block=1, l1_bytes=200 * 1024,
                            l2_share_bytes=1 << 20)
    assert result.cycles >= 64 * machine.latency["fp32"]
    assert result.cycles < 64 * machine.latency["fp32"] + 200


@pytest.mark.toolchain
def test_segment_orders_keep_every_instruction_after_its_producers(machine):
    from kerncast.corpus import get_kernel
    from kerncast.emu import build_program
    from kerncast.frontend import compile as compile_source

    kernel = get_kernel("matmul_tiled")
    config = kernel.launch("small")
    tu = compile_source(str(kernel.source_path("cuda")), lang="cuda", arch="h100-sxm",
                        defines=dict(config.defines))
    program = build_program(tu.module.kernel(tu.kernel(kernel.entry).entry), tu.module)
    _, _, orders = build_table(program, machine)
    assert orders  # the tiled multiply has segments worth reordering
    for key, order in orders.items():
        start = key[1] if isinstance(key, tuple) else key
        order = order[2] if isinstance(key, tuple) else order
        assert sorted(order) == list(range(start, start + len(order)))
        assert _raw_violations(program, start, order) == []


def _reduction_program(items: int):
    from kerncast.corpus import get_kernel
    from kerncast.emu import build_program
    from kerncast.frontend import compile as compile_source

    kernel = get_kernel("reduce_tree")
    config = kernel.launch("small", {"bx": 256, "items": items})
    tu = compile_source(str(kernel.source_path("cuda")), lang="cuda", arch="h100-sxm",
                        defines=dict(config.defines))
    return build_program(tu.module.kernel(tu.kernel(kernel.entry).entry), tu.module)


@pytest.mark.toolchain
def test_guarded_loads_are_scheduled_as_one_predicated_chain(machine):
    """``if (e < n) sum += x[e]`` unrolled: ptxas predicates each guarded load and issues
    them ahead of the adds; the chain's order does the same, keeping every producer
    ahead of its consumers."""
    program = _reduction_program(8)
    _, _, orders = build_table(program, machine)
    chains = {k[1]: v for k, v in orders.items() if isinstance(k, tuple)}
    assert chains
    start, (seg_starts, seg_ends, order, regions) = max(chains.items(), key=lambda kv: len(kv[1][2]))
    items = program.items
    loads = [i for i, pc in enumerate(order) if items[pc].kind == "op"
             and items[pc].instr.opcode == "ld" and items[pc].instr.space == "global"]
    adds = [i for i, pc in enumerate(order) if items[pc].kind == "op"
            and items[pc].instr.opcode == "add" and items[pc].instr.type == "f32"]
    assert len(loads) == 8 and len(seg_starts) >= 8
    assert len(regions) == 8  # each guarded load's region may be branched over
    assert max(loads) < adds[1]  # every load issues before the second accumulation
    assert _raw_violations(program, start, order) == []


def test_a_chain_is_issued_in_its_order_only_where_a_warp_ran_all_of_it():
    from types import SimpleNamespace

    from kerncast.sim._predict import _expand

    # segments [0,3) [3,5) [5,7); chain order moves pc 5 (a load) to the front
    chain = ((0, 3, 5), (3, 5, 7), (5, 0, 1, 2, 3, 4, 6))
    ran_all = SimpleNamespace(start=[0, 3, 5, 0, 5], end=[3, 5, 7, 3, 7], order=[0, 1, 2, 3, 4])
    pcs, steps, total = _expand(ran_all, {("chain", 0): chain}, None)
    assert total == 12
    assert pcs.tolist() == [5, 0, 1, 2, 3, 4, 6, 0, 1, 2, 5, 6]
    assert steps.tolist() == [2, 0, 0, 0, 1, 1, 2, 3, 3, 3, 4, 4]  # each pc keeps its run


def test_a_warp_that_branched_over_regions_issues_them_predicated_off():
    from types import SimpleNamespace

    from kerncast.sim._predict import _expand

    # segment [3,5) is a guarded region: the second run branched over it
    chain = ((0, 3, 5), (3, 5, 7), (5, 0, 1, 2, 3, 4, 6), (1,))
    runs = SimpleNamespace(start=[0, 3, 5, 0, 5], end=[3, 5, 7, 3, 7], order=[0, 1, 2, 3, 4])
    pcs, steps, total = _expand(runs, {("chain", 0): chain}, None)
    assert total == 14  # two predicated-off instructions more than were traced
    assert pcs.tolist() == [5, 0, 1, 2, 3, 4, 6] * 2
    assert steps.tolist() == [2, 0, 0, 0, 1, 1, 2] + [4, 3, 3, 3, -1, -1, 4]
    # a segment that is not a region may not be missing: that run keeps its own order
    strict = ((0, 3, 5), (3, 5, 7), (5, 0, 1, 2, 3, 4, 6), ())
    pcs, _, total = _expand(runs, {("chain", 0): strict}, None)
    assert total == 12 and pcs.tolist()[7:] == [0, 1, 2, 5, 6]


def test_the_issue_count_of_each_pc_is_that_of_the_warps_expanded_streams():
    from types import SimpleNamespace

    chain = ((0, 3, 5), (3, 5, 7), (5, 0, 1, 2, 3, 4, 6), (1,))
    streams = {0: SimpleNamespace(start=[0, 3, 5, 0, 5], end=[3, 5, 7, 3, 7],
                                  order=[0, 1, 2, 3, 4]),
               1: SimpleNamespace(start=[0, 5, 0, 3, 5], end=[3, 7, 3, 5, 7],
                                  order=[5, 6, 7, 8, 9])}
    orders = {("chain", 0): chain}
    executed, issued, expanded = _issue_counts(streams, orders)
    assert issued.tolist() == expanded.tolist()
    assert (expanded - executed).tolist() == [0, 0, 0, 2, 2, 0, 0]  # two runs skipped [3, 5)


def _issue_counts(streams: dict, orders: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pc of a 7-instruction program run by ``streams``: its executions, what
    :func:`_issued` counts, and the pcs of the streams each expanded alone."""
    from types import SimpleNamespace

    from kerncast.sim._predict import _expand, _issued

    executed = np.zeros(7, np.int64)
    for stream in streams.values():
        for a, b in zip(stream.start, stream.end):
            executed[a:b] += 1
    trace = SimpleNamespace(program=SimpleNamespace(items=[None] * 7),
                            pc_counts=(executed, executed * 32), streams=lambda: streams)
    expanded = sum(np.bincount(_expand(s, orders, None)[0], minlength=7) for s in streams.values())
    return executed, _issued(trace, orders), expanded


def test_warps_that_ran_the_same_segments_share_their_pcs_and_keep_their_steps():
    from types import SimpleNamespace

    from kerncast.sim._predict import _expand

    chain = ((0, 3, 5), (3, 5, 7), (5, 0, 1, 2, 3, 4, 6), (1,))
    orders = {("chain", 0): chain}
    one = SimpleNamespace(start=[0, 3, 5, 0, 5], end=[3, 5, 7, 3, 7], order=[0, 1, 2, 3, 4])
    two = SimpleNamespace(start=one.start, end=one.end, order=[10, 11, 12, 13, 14])
    shapes: dict = {}
    first = _expand(one, orders, None, shapes)
    second = _expand(two, orders, None, shapes)
    assert len(shapes) == 1 and second[0] is first[0] and not second[0].flags.writeable
    alone = _expand(two, orders, None)  # worked out afresh
    assert second[0].tolist() == alone[0].tolist() and second[2] == alone[2] == 14
    assert second[1].tolist() == alone[1].tolist() == \
        [12, 10, 10, 10, 11, 11, 12] + [14, 13, 13, 13, -1, -1, 14]
    # the issue counts add a repeated sequence once per warp that ran it
    streams = {0: one, 1: two, 2: SimpleNamespace(start=[0, 5], end=[3, 7], order=[20, 21])}
    _, issued, expanded = _issue_counts(streams, orders)
    assert issued.tolist() == expanded.tolist()


def _raw_violations(program, start: int, order) -> list[tuple[int, int]]:
    """(producer, consumer) pairs of a segment that ``order`` issues the wrong way round."""
    position = {pc: i for i, pc in enumerate(order)}
    last_write: dict[str, int] = {}
    wrong = []
    for pc in range(start, start + len(order)):
        item = program.items[pc]
        if item.kind != "op":
            continue
        for reg in read_registers(item.instr):
            producer = last_write.get(item.frame.reg(reg))
            if producer is not None and position[producer] > position[pc]:
                wrong.append((producer, pc))
        for reg in written_registers(item.instr):
            last_write[item.frame.reg(reg)] = pc
    return wrong


# -- constant loads ----------------------------------------------------------------------

def test_divergent_constant_loads_are_replayed_per_address(machine):
    from kerncast.emu import emulate_corpus
    from kerncast.sim._pipeline import constant_replays

    trace = emulate_corpus("dct8x8", "small").trace
    table, _, _ = build_table(trace.program, machine)
    replayed = constant_replays(table, trace)
    acc = trace.memory
    const = acc.space == SPACES.index("const")
    changed = [p for p, (a, b) in enumerate(zip(table, replayed)) if a != b]
    assert changed and set(changed) <= set(np.unique(acc.pc[const]).tolist())
    for p in changed:
        lanes = const & (acc.pc == p)
        per_request = [len(np.unique(acc.address[lanes & (acc.request == r)]))
                       for r in np.unique(acc.request[lanes])]
        n = float(np.mean(per_request))
        # the SM's constant cache serves one address every two cycles: eight cycles of
        # each of the four schedulers (tools/constant_cache_probe.py)
        assert replayed[p].issue == pytest.approx(table[p].issue * 8 * n)
        assert replayed[p].latency == pytest.approx(table[p].latency + 8 * (n - 1))
    # a uniform constant load, and a kernel without any, are left alone
    assert all(replayed[p] == table[p] for p in range(len(table)) if p not in changed)
    copy = emulate_corpus("copy_vector", "small").trace
    plain, _, _ = build_table(copy.program, machine)
    assert constant_replays(plain, copy) is plain


# -- rounds that follow each other ----------------------------------------------------------

class _Apart:
    """L2 sharing in which every block's data is its own."""

    warm = False
    restored = np.zeros((0, 2), np.int64)

    def shifts_of(self, instances, blocks, origins):
        return (np.asarray(blocks) - np.asarray(origins)) << 20


def _load_then_reduce(machine, loads: int, chain: int):
    """A one-warp block that loads ``loads`` lines from DRAM, then adds them in a
    dependent chain of ``chain`` instructions: its memory and arithmetic phases."""
    table = [_mem(dsts=(i,)) for i in range(loads)]
    table += [_alu(machine, srcs=(k % loads, loads), dsts=(loads,)) for k in range(chain)]
    costs = {(w, 0, i): RequestCost(LOAD, GLOBAL, tuple(range((w * loads + i) * 4,
                                                              (w * loads + i) * 4 + 4)),
                                    4, 1, 1.0, instance=(0, i, 0))
             for w in range(8) for i in range(loads)}
    return table, costs


def test_blocks_that_follow_each_other_overlap_one_phase_with_anothers(machine):
    table, costs = _load_then_reduce(machine, loads=16, chain=120)
    streams = [list(range(len(table)))] * 8
    kw = dict(active=132, stands_for=[(b, b) for b in range(8)], source=list(range(8)),
              sharing=_Apart())
    lockstep = _run(machine, streams, table, costs, **kw)
    steady = _run(machine, streams, table, costs, generations=4, wave=8 * 132, **kw)
    # one block's chain runs while the next one's loads are in flight ...
    assert steady.cycles < 0.9 * lockstep.cycles
    # ... but no round moves its bytes faster than this SM's share of the DRAM, nor
    # starts its blocks sooner than the block scheduler's turnaround allows
    read = machine.dram_rates()[0]
    assert steady.cycles >= lockstep.dram_bytes / min(read / 132,
                                                      machine.sm_dram_bytes_per_cycle())
    assert steady.cycles >= 120 * machine.latency["fp32"] + machine.block_turnaround()[0]
    assert steady.dram_bytes == pytest.approx(lockstep.dram_bytes)  # per round
    assert lockstep.lead == 0.0


def test_a_short_blocks_slot_is_idle_for_the_turnaround_between_blocks(machine):
    turnaround = machine.block_turnaround()[0]
    assert turnaround > 0
    chain = 200
    table = [_alu(machine, srcs=(0,), dsts=(0,))]
    streams = [[0] * chain]
    steady = _run(machine, streams, table, stands_for=[(0, 0)], source=[0], sharing=_Apart(),
                  generations=4, wave=132)
    assert steady.cycles == pytest.approx(chain * machine.latency["fp32"] + turnaround,
                                          rel=0.02)
    # the first round starts at once: four rounds take the simulated time of four
    assert 4 * steady.cycles + steady.lead == pytest.approx(
        4 * chain * machine.latency["fp32"] + 3 * turnaround, rel=0.02)


def test_a_long_round_is_sampled_in_windows_at_each_blocks_own_phase():
    n, wpb, blocks = 10_000, 2, 4
    streams = [(np.arange(n, dtype=np.int64), np.zeros(n, np.int64))] * (wpb * blocks)
    budget = n * wpb * blocks // 10
    together, scale = sample_streams(streams, budget)
    drifted, scale_drifted = sample_streams(streams, budget, warps_per_block=wpb)
    assert scale == scale_drifted == pytest.approx(10, rel=0.01)
    width = len(together[0][0]) // WINDOWS
    firsts = [pcs[0] for pcs, _ in drifted]
    assert all(pcs[0] == 0 for pcs, _ in together)  # every block at the same point
    assert firsts[0] == firsts[1] == 0 and firsts[2] == firsts[3]  # a block's warps alike
    spacing = (n - width) / (WINDOWS - 1)
    assert firsts[::wpb] == [int(b / blocks * spacing) for b in range(blocks)]
    for pcs, _ in drifted:  # every window whole and inside the stream
        assert len(pcs) == WINDOWS * width and max(pcs) < n



def test_a_whole_round_starts_each_block_at_its_own_phase(machine):
    n, wpb, blocks = 100, 2, 4
    table = [_alu(machine)] * n
    streams = [(np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64))] * (wpb * blocks)
    together, scale = sample_streams(streams, 10 * n * wpb * blocks)
    drifted, scale_drifted = sample_streams(streams, 10 * n * wpb * blocks,
                                            warps_per_block=wpb, table=table)
    assert scale == scale_drifted == 1.0
    assert all(pcs[0] == 0 for pcs, _ in together)
    firsts = [pcs[0] for pcs, _ in drifted]
    assert firsts == [b * n // blocks for b in range(blocks) for _ in range(wpb)]
    for pcs, steps in drifted:  # the whole stream, wrapped round, steps with their pcs
        assert sorted(pcs) == list(range(n)) and pcs == steps
        assert pcs == pcs[:1] + [(pcs[0] + i) % n for i in range(1, n)]


def test_a_rotated_block_starts_past_a_barrier_all_its_warps_passed(machine):
    table = [_alu(machine), _bar()]
    # warps of one block issue their barriers at different positions
    short = np.array([0, 1, 0, 1, 0, 1, 0], np.int64)
    long = np.array([0, 0, 0, 1, 0, 1, 0, 0, 1, 0], np.int64)
    streams = [(p, np.arange(len(p), dtype=np.int64)) for p in (short, long)] * 4
    out = rotate_streams(streams, 2, table)
    # block b of 4 starts past int(b / 4 * 4) of its 3 barriers
    for b, passed in enumerate([0, 1, 2, 3]):
        for w, pcs in ((2 * b, short), (2 * b + 1, long)):
            cut = 0 if passed == 0 else int(np.flatnonzero(pcs == 1)[passed - 1]) + 1
            assert out[w][0] == np.concatenate([pcs[cut:], pcs[:cut]]).tolist()
    # warps that pass different numbers of barriers keep their block at its start
    uneven = [(short, np.arange(7, dtype=np.int64)), (long[:4], np.arange(4, dtype=np.int64))]
    assert rotate_streams(uneven * 2, 2, table)[2:] == [(p.tolist(), s.tolist())
                                                      for p, s in uneven]


def _phased_round(machine, rotated: bool):
    """Four blocks of two warps, each six times: 16 DRAM loads, a barrier, 16 shared-memory
    loads of eight wavefronts on the last load's value, a barrier."""
    loads, taps, reps, blocks, wpb = 16, 16, 6, 4, 2
    table = ([_mem(dsts=(i,)) for i in range(loads)] + [_bar()]
             + [_mem(srcs=(loads - 1,), dsts=(loads,)), _bar()])
    one = list(range(loads)) + [loads] + [loads + 1] * taps + [loads + 2]
    pcs = np.array(one * reps, np.int64)
    steps = np.repeat(np.arange(reps, dtype=np.int64), len(one))
    warps = blocks * wpb
    costs = {}
    for w in range(warps):
        for r in range(reps):
            for i in range(loads):
                first = 4 * ((w * reps + r) * loads + i)
                costs[(w, r, i)] = RequestCost(LOAD, GLOBAL, tuple(range(first, first + 4)),
                                               1, 1, 1.0)
            costs[(w, r, loads + 1)] = RequestCost(LOAD, SPACES.index("shared"), (), 1, 8, 0.0)
    streams = [(pcs, steps)] * warps
    sampled = sample_streams(streams, 10 ** 6, warps_per_block=wpb,
                             table=table if rotated else None)
    return simulate_round(streams, table, loads + 1, costs, machine, active_sms=132,
                          warps_per_block=wpb, l1_bytes=200 * 1024, l2_share_bytes=400 * 1024,
                          source=list(range(warps)), sampled=sampled)


def test_blocks_at_spread_phases_do_the_same_work(machine):
    together = _phased_round(machine, rotated=False)
    drifted = _phased_round(machine, rotated=True)
    assert drifted.instructions == together.instructions
    assert drifted.dram_bytes == pytest.approx(together.dram_bytes)
    assert drifted.busy == pytest.approx(together.busy)
    assert drifted.barrier_wait != together.barrier_wait  # the blocks did start apart
    # no faster than the SM's share of the DRAM moves the bytes
    share = min(machine.dram_rates()[0] / 132, machine.sm_dram_bytes_per_cycle())
    for result in (together, drifted):
        assert result.cycles >= result.dram_bytes / share

def _ops_program(opcodes):
    from types import SimpleNamespace

    return [SimpleNamespace(kind="op", instr=SimpleNamespace(opcode=o)) for o in opcodes]


def test_a_segment_issues_where_ptxas_placed_its_sass():
    from kerncast.sim._pipeline import _schedule

    load = partial(Op, K_MEM, 0, 1.0, 1, 0.0)
    alu = partial(Op, K_ALU, 0, 1.0, 1, 4.0)
    table = [load((9,), (0,)),    # 0: first sector
             load((9,), (1,)),    # 1: second sector
             alu((0,), (2,)),     # 2: folded into 3 (no SASS of its own)
             alu((2,), (3,)),     # 3: the first atom's work
             alu((1,), (4,))]     # 4: the second atom's work
    items = _ops_program(["ld", "ld", "mul", "add", "add"])
    pcs = list(range(5))
    # a list scheduler hoists both loads; ptxas loads the second after the first's work
    assert _schedule(pcs, table, items)[:2] == (0, 1)
    assert _schedule(pcs, table, items, places={0: 0, 1: 32, 3: 16, 4: 48}) == (0, 2, 3, 1, 4)
    # a place that contradicts a dependence does not move an instruction above its producer
    assert _schedule(pcs, table, items, places={0: 40, 1: 0, 2: 8, 3: 16, 4: 24}) == (
        1, 4, 0, 2, 3)


def test_an_instruction_ptxas_merged_into_another_issues_with_it():
    """Two constant loads of one address register are one ``LDC.64``: the one without
    SASS of its own issues beside the one that has it, not just before its user."""
    from kerncast.sim._pipeline import _schedule

    alu = partial(Op, K_ALU, 0, 1.0, 1, 4.0)
    table = [alu((9,), (0,)),       # 0: ld.const [r9]    (LDC.64, both words)
             alu((9,), (1,)),       # 1: ld.const [r9+4]  (no SASS of its own)
             alu((5,), (6,)),       # 2: other work
             alu((0, 6), (7,)),     # 3: uses the first word
             alu((1, 7), (8,))]     # 4: uses the second
    items = _ops_program(["ld", "ld", "add", "fma", "fma"])
    assert _schedule(list(range(5)), table, items, places={0: 0, 2: 16, 3: 32, 4: 48}) == (
        0, 1, 2, 3, 4)
    # without the sibling, the unplaced load would wait until just before its user
    table[1] = alu((10,), (1,))
    assert _schedule(list(range(5)), table, items, places={0: 0, 2: 16, 3: 32, 4: 48}) == (
        0, 2, 3, 1, 4)


# -- taken branches ----------------------------------------------------------------------

def _loop_table(machine, body: int) -> list[Op]:
    """``body`` independent FP32 instructions and a branch back to the first (pc ``body``)."""
    branch = Op(K_ALU, PIPES.index("ctrl"), 1.0, 1, 2.0, (), (), redirect=TAKEN_BRANCH_CYCLES)
    return [_alu(machine, dsts=(i,)) for i in range(body)] + [branch]


def _trips(body: int, trips: int) -> tuple[np.ndarray, np.ndarray]:
    """A warp's stream of ``trips`` trips of a loop of ``body`` instructions and its
    branch: (pcs, steps), a step a trip."""
    return (np.tile(np.arange(body + 1), trips), np.repeat(np.arange(trips), body + 1))


def _looped(machine, table, warps: int, body: int, trips: int, taken) -> float:
    streams = [_trips(body, trips)] * warps
    return simulate_round(streams, table, _nregs(table), {}, machine, active_sms=132,
                          warps_per_block=1, l1_bytes=200 * 1024, l2_share_bytes=400 * 1024,
                          taken=[taken] * warps).cycles


@pytest.mark.parametrize("body", [4, 40])
def test_a_taken_branch_holds_its_warp_for_the_targets_fetch(machine, body):
    trips = 50
    table = _loop_table(machine, body)
    back = np.arange(trips - 1)  # every trip but the last branches back
    # a warp alone: each trip is its instructions and the fetch of the loop's top
    alone = _looped(machine, table, 1, body, trips, back)
    assert alone == pytest.approx(trips * body + (trips - 1) * TAKEN_BRANCH_CYCLES + 1,
                                  rel=0.02)
    # the same stream of a branch never taken (a warp that ran it unrolled): no fetch
    straight = _looped(machine, table, 1, body, trips, np.zeros(0, np.int64))
    assert straight <= trips * (body + 1) + machine.latency["fp32"] + 2
    # warps enough on each scheduler fill the fetch: one instruction a cycle again
    per_scheduler = 16
    many = _looped(machine, table, machine.schedulers * per_scheduler, body, trips, back)
    assert many == pytest.approx(trips * (body + 1) * per_scheduler, rel=0.05)


def test_a_warps_taken_steps_are_those_its_next_segment_does_not_follow():
    from types import SimpleNamespace

    from kerncast.sim._predict import taken_steps

    # segments [0,4) [4,6) [0,4) [6,9): the first [0,4) falls through into [4,6), which
    # branches back to 0; the second [0,4) branches over [4,6) to 6
    stream = SimpleNamespace(start=[0, 4, 0, 6], end=[4, 6, 4, 9], order=[3, 7, 9, 12])
    assert taken_steps(stream).tolist() == [7, 9]


def test_a_branch_reads_its_predicate_late(machine):
    compare = _alu(machine, "int", dsts=(0,))
    branch = Op(K_ALU, PIPES.index("ctrl"), 1.0, 1, 2.0, (0,), ())
    after = _alu(machine, srcs=(), dsts=(1,))
    cycles = {late: _run(machine, [[0, 1, 2]], [compare, replace(branch, late=late), after]).cycles
              for late in (0.0, BRANCH_PREDICATE_CYCLES)}
    assert cycles[BRANCH_PREDICATE_CYCLES] - cycles[0.0] == pytest.approx(
        BRANCH_PREDICATE_CYCLES)


LOOP = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .f32 m, .param .f32 c)
{
.reg .f32 %f<4>; .reg .u32 %r<4>; .reg .pred %p<3>; .reg .u64 %rd<3>;
ld.param.f32 %f1, [m]; ld.param.f32 %f2, [c]; mov.u32 %r1, 0; mov.f32 %f3, 0f00000000;
mov.u32 %r2, %tid.x;
setp.gt.u32 %p2, %r2, 7;
@%p2 bra SKIP;
add.f32 %f3, %f3, %f2;
SKIP:
LOOP:
fma.rn.f32 %f3, %f3, %f1, %f2;
add.u32 %r1, %r1, 1;
setp.lt.u32 %p1, %r1, 16;
@%p1 bra LOOP;
ld.param.u64 %rd1, [out];
mul.wide.u32 %rd2, %r2, 4;
add.u64 %rd1, %rd1, %rd2;
st.global.f32 [%rd1], %f3;
ret;
}
"""


def test_loop_branches_are_taken_branches_and_if_converted_ones_are_not(machine):
    trace = _emulated(LOOP, 32).trace
    table, _, _ = build_table(trace.program, machine)
    redirect = {item.instr.line: op.redirect for item, op in zip(trace.program.items, table)
                if item.kind == "op" and item.instr.opcode == "bra"}
    assert sorted(redirect.values()) == [0.0, TAKEN_BRANCH_CYCLES]  # the guard's: predicated
    late = [op.late for item, op in zip(trace.program.items, table)
            if item.kind == "op" and item.instr.opcode == "bra"]
    assert sorted(late) == [0.0, BRANCH_PREDICATE_CYCLES]


def test_shared_accesses_hold_the_path_the_calibrated_cycles_a_wavefront(machine):
    """64 warps of independent shared loads: the round takes the path's cycles for every
    wavefront, twice as long where the calibration says a wavefront takes two cycles."""
    table = [_mem(dsts=(i % 8,)) for i in range(8)]
    streams = [list(range(8)) * 25] * 64
    shared = SPACES.index("shared")
    costs = {(w, 0, pc): RequestCost(LOAD, shared, (), 1, 2, 0.0)
             for w in range(64) for pc in range(8)}
    slow = replace(machine, calibration=replace(machine.calibration, memory={
        **machine.calibration.memory, "shared_cycles_load_4": 2.0}))
    one, two = (_run(m, streams, table, costs, active=1) for m in (machine, slow))
    waves = 64 * 200 * 2  # every access two wavefronts
    assert one.cycles == pytest.approx(waves * machine.shared_path_cycles()[0], rel=0.05)
    assert two.cycles == pytest.approx(2 * one.cycles, rel=0.05)
def test_a_long_warp_bounds_one_wave_but_counts_once_over_many(machine):
    """Warps of unequal work (one block's chain four times the others'), sampled: a launch
    of one wave ends with its longest block; over many waves each slot takes its next
    block as its block ends, so a round lasts the blocks' mean and the longest block's
    excess counts once over the launch (no sooner than the SM issues the round's
    instructions)."""
    chain = [_alu(machine, srcs=(0,), dsts=(0,))]
    lat = machine.latency["fp32"]
    streams = [[0] * (4 * N)] + [[0] * N] * 15
    one = _run(machine, streams, chain, budget=1_000, waves=1)
    many = _run(machine, streams, chain, budget=1_000, waves=100)
    assert one.scale > 1.0
    assert one.cycles == pytest.approx(4 * N * lat, rel=0.05)
    # no sooner than the SM issues the round's work, far sooner than the long block
    assert (4 * N + 15 * N) / 16 * lat < many.cycles < 0.6 * one.cycles


def test_order_statistics_of_the_spread_centre_on_the_mean_and_grow_with_rank_and_pages():
    spread = tuple(float(c) for c in np.linspace(-150.0, 350.0, 16))
    table = order_statistics(spread, 8)
    assert table.shape == (SPREAD_PAGES, 8)
    # one page: the ranks average the mean, the latest lies past it, the earliest short
    assert table[0].mean() == pytest.approx(0.0, abs=1.0)
    assert (np.diff(table[0]) > 0).all() and table[0, 0] < 0 < table[0, -1]
    # a request of more pages waits for the latest of them: later at every rank
    assert (table[3] > table[0]).all() and (table[31] >= table[3]).all()
    # a block of one warp reads at the mean
    assert order_statistics(spread, 1)[0, 0] == pytest.approx(0.0, abs=1.0)
    # flat past the outermost quantiles: no rank lies beyond them
    assert table.max() <= max(spread) - np.mean(spread) + 1.0

"""Static predictions of whole launches: physical relations the predicted times keep.

Launches are corpus kernels at size ``small``, or at a problem size chosen here (a
``LaunchConfig`` with other parameters and grid) to put a kernel in the regime a test
needs: a streaming copy large enough to be bound by DRAM bandwidth, a compute chain
filling exactly one, two or three waves of blocks.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import pytest

import kerncast.emu
from kerncast import InputError
from kerncast.corpus import get_kernel
from kerncast.models import BREAKDOWN_KEYS
from kerncast.sim import machine_for, predict_launch

H100 = "h100"

pytestmark = pytest.mark.toolchain  # compiles corpus kernels


@functools.cache
def _machine(device: str = H100):
    return machine_for(device)


def _copy_seconds(nbytes: float, device: str = H100) -> float:
    """``nbytes`` read and written half and half at the calibrated copy rate."""
    m = _machine(device)
    return nbytes / (m.dram_rates()[2] * m.clock_hz)


def _copy(n: int):
    """copy_vector over ``n`` floats: reads and writes ``4 n`` bytes each."""
    kernel = get_kernel("copy_vector")
    base = kernel.launch("small", {"bx": 256, "vec": 4})
    return kernel.instance(dataclasses.replace(base, params={"n": n}, grid=(n // (4 * 256),)))


def _strided(n: int, stride: int):
    kernel = get_kernel("copy_strided")
    base = kernel.launch("small", {"bx": 256, "stride": stride})
    cols = n // stride
    return kernel.instance(dataclasses.replace(base, params={"n": n},
                                               grid=(math.ceil(cols / 256), stride)))


def _fma(blocks: int, iters: int, ilp: int = 2):
    """arith_fp32 with ``blocks`` blocks of 256 threads, ``ilp`` chains of ``iters`` FMAs
    each."""
    kernel = get_kernel("arith_fp32")
    base = kernel.launch("small", {"bx": 256, "ilp": ilp})
    return kernel.instance(dataclasses.replace(
        base, params={"n": blocks * 256 * ilp, "iters": iters}, grid=(blocks,)))


def _execute(result, device: str = H100) -> float:
    """The predicted time less the fixed launch cost and a wave's retirement."""
    info, machine = result.based_on, _machine(device)
    wave = info["blocks_per_sm"] * info["sm_count"]
    return result.seconds - machine.launch_fixed_seconds() - \
        machine.dispatch_seconds(min(info["blocks"], wave))


# -- memory-bound ------------------------------------------------------------------------

def test_a_launch_of_many_waves_simulates_rounds_that_follow_each_other():
    many = predict_launch(*_copy(1 << 24), H100).based_on
    assert many["waves"] > 4 and many["rounds_simulated"] == 4
    assert many["block_phases"] == "spread"  # the resident blocks have drifted apart
    # the H100's calibration has no turnaround of its own: the H200's, as Hopper's, for
    # blocks of 8 warps
    h200 = _machine("h200")
    assert many["block_turnaround"] == {"cycles": pytest.approx(h200.block_turnaround(8)[0]),
                                        "calibration": "h200"}
    assert h200.block_turnaround(1)[0] < many["block_turnaround"]["cycles"]
    assert many["dram_load_latency"] is None  # the H100 has no loaded-latency probe
    on_h200 = predict_launch(*_copy(1 << 24), "h200").based_on["dram_load_latency"]
    assert on_h200["calibration"] == "h200" and on_h200["most_cycles"] > 100
    one = predict_launch(*_copy(1 << 20), H100).based_on
    assert one["waves"] == 1 and one["rounds_simulated"] == 1
    assert one["block_phases"] == "together"  # one wave: its blocks start at once
    assert one["block_turnaround"] is None


def test_a_streaming_copy_approaches_bytes_over_dram_bandwidth():
    ratios = []
    for n in (1 << 20, 1 << 24, 1 << 26):
        result = predict_launch(*_copy(n), H100)
        ideal = _copy_seconds(8 * n)
        assert result.seconds >= ideal
        ratios.append(result.seconds / ideal)
    assert ratios[0] > ratios[1] > ratios[2]
    assert ratios[2] < 1.1
    big = predict_launch(*_copy(1 << 26), H100)
    assert big.bottleneck == "memory"
    assert big.based_on["inputs"] == "zeros" and not big.based_on["data_dependent"]


def test_data_that_fits_in_the_l2_is_faster_per_byte():
    """A stride-8 gather reads each 32-byte sector for one float; the other floats of the
    sector are read by other blocks. When the input fits in the L2 (16 MiB of 50) the
    reuse hits there; at 256 MiB every block's sectors come from DRAM again."""
    small_n, large_n = 1 << 22, 1 << 26
    small = predict_launch(*_strided(small_n, 8), H100)
    large = predict_launch(*_strided(large_n, 8), H100)
    per_small = _execute(small) / small_n
    per_large = _execute(large) / large_n
    assert per_small < 0.7 * per_large
    assert small.based_on["dram_bytes_per_round"] < large.based_on["dram_bytes_per_round"]
    # with stride 1 there is no reuse to catch: the two sizes cost about the same per byte
    contiguous = [_execute(predict_launch(*_strided(n, 1), H100)) / n for n in (small_n, large_n)]
    assert contiguous[0] == pytest.approx(contiguous[1], rel=0.3)


def test_h200_predicts_a_memory_bound_kernel_no_slower_than_h100():
    kernel, config = _copy(1 << 26)
    h100 = predict_launch(kernel, config, "h100")
    h200 = predict_launch(kernel, config, "h200")
    assert h200.seconds <= h100.seconds
    bandwidth = (_machine("h200").dram_bytes_per_cycle() * _machine("h200").clock_hz) / \
        (_machine("h100").dram_bytes_per_cycle() * _machine("h100").clock_hz)
    assert _execute(h100) / _execute(h200, "h200") == pytest.approx(bandwidth, rel=0.1)
    assert h200.based_on["device"] == "h200" and h200.based_on["adapted_from"] is None


# -- compute-bound and waves -------------------------------------------------------------

WAVE = 8 * 132  # arith_fp32 at 256 threads: 8 blocks per SM (warps limit), 132 SMs


def test_the_wave_is_what_the_occupancy_allows():
    result = predict_launch(*_fma(WAVE, 64), H100)
    assert result.based_on["blocks_per_sm"] * result.based_on["sm_count"] == WAVE
    assert result.based_on["waves"] == 1


def test_a_waves_blocks_are_retired_one_after_another():
    # the blocks of a wave end together and the block scheduler takes one every
    # per_block_s: the launch ends a wave's worth of them later
    machine = _machine()
    for blocks in (132, WAVE, 3 * WAVE):
        result = predict_launch(*_fma(blocks, 64), H100)
        retiring = machine.dispatch_seconds(min(blocks, WAVE))
        assert retiring > 0
        assert result.breakdown["launch"] == pytest.approx(
            machine.launch_fixed_seconds() + retiring, rel=1e-9)
        assert result.seconds >= machine.launch_fixed_seconds() + retiring + \
            result.based_on["round_cycles"] / machine.clock_hz


def test_time_steps_with_waves():
    rounds = {}
    for blocks in (WAVE, WAVE + 1, 2 * WAVE, 3 * WAVE):
        rounds[blocks] = predict_launch(*_fma(blocks, 256), H100)
    assert [rounds[b].based_on["waves"] for b in sorted(rounds)] == [1, 2, 2, 3]
    one = rounds[WAVE]
    cycles = one.based_on["round_cycles"] / _machine().clock_hz
    for k in (1, 2, 3):  # (each its own round: the larger grids' buffers outgrow the L2)
        own = rounds[k * WAVE].based_on["round_cycles"] / _machine().clock_hz
        assert _execute(rounds[k * WAVE]) == pytest.approx(k * own, rel=1e-6)
    # one block more than a wave adds a tail wave: one block's time, less than a full round
    tail = _execute(rounds[WAVE + 1]) - _execute(one)
    assert 0.05 * cycles < tail < 0.8 * cycles


def test_compute_time_scales_with_the_work_and_respects_the_fma_peak():
    short = predict_launch(*_fma(WAVE, 512), H100)
    long = predict_launch(*_fma(WAVE, 1024), H100)
    assert _execute(long) / _execute(short) == pytest.approx(2.0, rel=0.15)
    assert long.bottleneck == "compute"
    m = _machine()
    fmas = WAVE * 256 * 2 * 1024
    peak = fmas / (m.sm_count * 128 * m.clock_hz)  # 128 fp32 lanes per SM
    assert _execute(long) >= peak
    # eight chains reuse their operands: the FMA pipe runs at its peak
    wide = predict_launch(*_fma(WAVE // 4, 1024, ilp=8), H100)
    assert wide.breakdown["compute"] == pytest.approx(peak, rel=0.1)
    # two chains read a register of the chain's bank every other FMA (ptxas's SASS):
    # measured on the H100 at size large, 3.31 ms against 2.33 ms with eight chains
    assert long.breakdown["compute"] / wide.breakdown["compute"] == pytest.approx(
        3.31 / 2.33, rel=0.1)


def test_fewer_sms_take_longer():
    kernel, config = _fma(WAVE, 256)
    full = predict_launch(kernel, config, H100)
    half = predict_launch(kernel, config, H100, sm_count=66)
    assert half.based_on["sm_count"] == 66 and half.based_on["waves"] == 2
    assert _execute(half) == pytest.approx(2 * _execute(full), rel=0.05)


# -- the breakdown -----------------------------------------------------------------------

SMALL_KERNELS = ("copy_vector", "matmul_tiled", "reduce_tree", "histo_global")


@pytest.mark.parametrize("name", SMALL_KERNELS)
def test_breakdown_parts_are_non_negative_and_relate_to_the_total(name):
    kernel = get_kernel(name)
    result = predict_launch(*kernel.instance(kernel.launch("small")), H100)
    parts = result.breakdown
    assert set(parts) == set(BREAKDOWN_KEYS)
    assert all(v >= 0 and math.isfinite(v) for v in parts.values())
    assert math.isfinite(result.seconds) and result.seconds > 0
    assert parts["launch"] >= _machine().launch_fixed_seconds()
    assert result.seconds >= parts["launch"]
    # latency is what the busiest of compute and memory leaves unexplained
    busiest = max(parts["compute"], parts["memory"])
    assert parts["latency"] == pytest.approx(max(result.seconds - parts["launch"] - busiest,
                                                 0.0), abs=1e-15)
    assert result.bottleneck == max(parts, key=parts.get)
    assert result.based_on["blocks"] == kernel.launch("small").blocks


def test_breakdown_of_large_launches_is_dominated_by_their_bottleneck():
    copy = predict_launch(*_copy(1 << 26), H100)
    # near the DRAM's peak its latency has grown (the calibrated loaded latency): the
    # copy's bytes in flight no longer cover it quite, and a tenth of the time is latency
    assert copy.breakdown["memory"] >= 0.85 * _execute(copy)
    assert copy.breakdown["memory"] <= copy.seconds
    chain = predict_launch(*_fma(2 * WAVE, 1024), H100)
    assert chain.breakdown["compute"] >= 0.5 * _execute(chain)
    assert chain.breakdown["compute"] <= chain.seconds


def test_kernels_with_barriers_have_synchronisation_time():
    kernel = get_kernel("matmul_tiled")
    result = predict_launch(*kernel.instance(kernel.launch("small")), H100)
    assert result.breakdown["synchronisation"] > 0
    no_barrier = predict_launch(*_copy(1 << 16), H100)
    assert no_barrier.breakdown["synchronisation"] == 0


def test_synchronisation_is_at_least_the_barrier_cost_of_each_warp():
    """matmul_tiled at size small (n=48, tile 16, one block per SM) passes 2 barriers per
    tile, 6 per warp; every barrier costs each warp of the 8-warp block at least the
    calibrated barrier cost, so a warp spends at least 6 x barrier_cycles(8) cycles (about
    88 ns) at barriers."""
    kernel = get_kernel("matmul_tiled")
    result = predict_launch(*kernel.instance(kernel.launch("small")), H100)
    m = _machine()
    floor = 6 * m.barrier_cycles(8) / m.clock_hz
    assert result.breakdown["synchronisation"] >= floor


@pytest.mark.parametrize("name", ("copy_vector", "histo_global"))
def test_predictions_are_deterministic(name):
    kernel = get_kernel(name)
    first = predict_launch(*kernel.instance(kernel.launch("small")), H100)
    second = predict_launch(*kernel.instance(kernel.launch("small")), H100)
    assert first.seconds == second.seconds and first.breakdown == second.breakdown
    assert first.bottleneck == second.bottleneck


def test_a_data_dependent_kernel_is_emulated_on_generated_inputs():
    kernel = get_kernel("bfs_frontier_expand")
    result = predict_launch(*kernel.instance(kernel.launch("small")), H100)
    assert result.based_on["data_dependent"] and result.based_on["inputs"] == "generated"
    assert result.seconds > _machine().launch_fixed_seconds()


def test_an_uncalibrated_device_says_whose_calibration_it_borrowed():
    kernel = get_kernel("copy_vector")
    result = predict_launch(*kernel.instance(kernel.launch("small")), "a100-80gb")
    assert result.based_on["adapted_from"] == "h100-sxm"
    assert result.based_on["sm_count"] == 108
    assert any(line.startswith("DRAM read, write and copy bandwidths: h100-sxm's x")
               for line in result.based_on["adaptation"])


# -- bad input ---------------------------------------------------------------------------

def test_a_block_too_large_for_the_device_is_bad_input():
    kernel, config = _copy(1 << 16)
    with pytest.raises(InputError, match="block size 2048 exceeds .*1024 threads per block"):
        predict_launch(kernel, dataclasses.replace(config, block=(2048,), grid=(8,)), H100)


def test_too_much_shared_memory_is_bad_input():
    kernel, config = _copy(1 << 16)
    config = dataclasses.replace(config, dynamic_shared=300_000)
    with pytest.raises(InputError, match="300000 bytes of shared memory .*use less"):
        predict_launch(kernel, config, H100)


def test_an_unknown_kernel_is_bad_input():
    with pytest.raises(InputError, match="no corpus kernel 'copy_vectr'; did you mean "
                                         "copy_vector"):
        get_kernel("copy_vectr")


def test_an_unknown_device_is_bad_input():
    kernel = get_kernel("copy_vector")
    with pytest.raises(InputError, match="unknown device 'no-such-gpu'"):
        predict_launch(*kernel.instance(kernel.launch("small")), "no-such-gpu")


def test_an_emulation_over_its_step_budget_is_bad_input(monkeypatch):
    monkeypatch.setattr(kerncast.emu, "emulate",
                        functools.partial(kerncast.emu.emulate, step_budget=50))
    kernel = get_kernel("arith_fp32")
    with pytest.raises(InputError, match="arith_fp32 did not finish within 50 "
                                         "warp-instruction steps"):
        predict_launch(*kernel.instance(kernel.launch("small")), H100)


def test_buffers_that_do_not_fit_the_device_are_bad_input():
    """matmul_naive at n = 131072 needs three 64 GiB matrices, 192 GiB in all, on an 80 GiB
    H100: the launch cannot run, and predicting it says so before anything is allocated."""
    kernel = get_kernel("matmul_naive")
    n = 131072
    config = dataclasses.replace(kernel.launch("small"), params={"n": n},
                                 grid=(n // 16, n // 16))
    with pytest.raises(InputError, match="GiB"):
        predict_launch(*kernel.instance(config), H100)


def test_progress_names_each_step_in_order():
    steps: list[str] = []
    k = get_kernel("histo_global")  # data-dependent: its inputs are generated
    predict_launch(*k.instance(k.launch("small")), "h100", progress=steps.append)
    assert [s.split()[0] for s in steps] == ["compiling", "generating", "emulating", "simulating"]
    plain: list[str] = []
    c = get_kernel("copy_vector")  # any values give its trace: no inputs to generate
    predict_launch(*c.instance(c.launch("small")), "h100", progress=plain.append)
    assert [s.split()[0] for s in plain] == ["compiling", "emulating", "simulating"]


def test_addresses_drawn_recovers_a_histograms_bins():
    import numpy as np

    from kerncast.sim._predict import _addresses_drawn

    rng = np.random.default_rng(1)
    for bins in (4, 32, 256, 4096):
        draws = rng.integers(0, bins, 3000)
        assert _addresses_drawn(len(draws), len(np.unique(draws))) == pytest.approx(bins, rel=0.1)
    assert _addresses_drawn(100, 100) is None  # every draw distinct: too many to tell
    # far more draws than addresses: every one seen, N is what was seen
    assert all(_addresses_drawn(40_000, d) == d for d in (1, 3, 7, 256))


def test_scattered_lanes_exclude_coalesced_and_single_word_requests():
    import numpy as np

    from kerncast.sim._predict import _scattered

    request = np.repeat([0, 1, 2], 32)
    address = np.concatenate([
        4096 + 4 * np.arange(32),                   # one word per lane in one line
        np.full(32, 8192),                          # one word for all: the per-address bound
        4 * np.random.default_rng(0).integers(0, 256, 32)])  # a histogram's scattered lanes
    got = _scattered(request, address)
    assert not got[:64].any() and got[64:].all()


def test_a_small_histogram_is_bound_by_the_atomic_units():
    k = get_kernel("atomic_contention")
    few = k.launch("medium", {"bx": 256, "nbins": 32})
    many = k.launch("medium", {"bx": 256, "nbins": 65536})
    m = machine_for("h100")
    t_few = predict_launch(*k.instance(few), "h100").seconds
    ops = few.blocks * 256  # one add per thread
    assert t_few >= ops / m.atomic_rate_over(32)
    assert t_few > 5 * predict_launch(*k.instance(many), "h100").seconds


def test_blocks_merging_their_histograms_are_bound_by_the_lines_they_share():
    # histo_shared at size medium, 1,024-pixel blocks: each block adds its nonzero bins
    # (about 75 of 256) to the global histogram's 8 lines, a warp's lanes on one line
    k = get_kernel("histo_shared")
    launch = k.launch("medium", {"bx": 256, "items": 4})
    m = machine_for("h200")
    seconds = predict_launch(*k.instance(launch), "h200").seconds
    assert seconds >= launch.blocks * 50 / m.atomic_rate_over_lines(8)
    # without the calibrated curve the merge is bound only by the per-word rates
    bare = dataclasses.replace(m, calibration=dataclasses.replace(
        m.calibration, curves={c: v for c, v in m.calibration.curves.items()
                               if c != "atomic_global_per_s_vs_lines"}))
    without = predict_launch(*k.instance(launch), "h200", machine=bare).seconds
    assert seconds > 1.3 * without


def test_one_traced_block_still_sees_an_address_the_whole_grid_shares():
    # size small: 32 blocks of 128, one per SM, so one block is traced; every thread adds
    # to bin 0, and the 4,096 adds serialise on that one address
    k = get_kernel("atomic_contention")
    one = k.launch("small", {"bx": 128, "nbins": 1})
    contended, _ = machine_for("h200").atomic_rates()
    seconds = predict_launch(*k.instance(one), "h200").seconds
    assert seconds >= 4096 / contended
    spread = k.launch("small", {"bx": 128, "nbins": 65536})
    assert seconds > 1.3 * predict_launch(*k.instance(spread), "h200").seconds


# -- grids whose blocks differ in work -----------------------------------------------------------

def test_short_blocks_are_those_that_finish_within_the_budget():
    from kerncast.emu import MemoryFault
    from kerncast.sim._predict import UNEVEN_SHARE, short_blocks

    calls = []

    def run(chosen, budget):  # blocks 0-49 work, the others exit at once
        calls.append((list(chosen), budget))
        if 75 in chosen:
            raise MemoryFault("block 75 read past its buffer")
        return [b for b in chosen if b < 50]

    assert short_blocks(run, 100, 1000.0) == [50]
    budget = int(UNEVEN_SHARE * 1000)
    # together first; a fault in one sends each block alone, the faulting one not counted
    assert calls == [([25, 50, 75], budget), ([25], budget), ([50], budget), ([75], budget)]
    calls.clear()
    assert short_blocks(run, 200, 1000.0) == [50, 100, 150]
    assert calls == [([50, 100, 150], budget)]
    assert short_blocks(run, 1, 1000.0) == []  # no block but block 0 to check


def _transpose(tmp_path, rows: int, grid_rows: int):
    """The user kernel tile_transpose over a rows x rows matrix, ``grid_rows`` rows of
    32 x 32 tiles launched (more than the matrix needs: the blocks past it skip their
    loads and stores)."""
    from pathlib import Path

    from kerncast.core import load_launch_file

    source = Path(__file__).resolve().parents[1] / "userkernels" / "tile_transpose.cu"
    path = tmp_path / f"transpose_{grid_rows}.toml"
    path.write_text(f'kernel = "tile_transpose"\nsource = "{source}"\n'
                    f"grid = [{rows // 32}, {grid_rows}]\nblock = [32, 8]\n"
                    f'args = ["dst=float32[{rows}, {rows}]", "src=float32[{rows}, {rows}]", '
                    f'"rows=int32:{rows}", "cols=int32:{rows}"]\n')
    return load_launch_file(path).launch()


def test_blocks_launched_past_the_data_are_not_charged_as_working_ones(tmp_path, monkeypatch):
    import kerncast.sim._predict as sim_predict

    over = predict_launch(*_transpose(tmp_path, 1024, 128), H100)
    assert over.based_on["short_blocks"] == [1024, 2048, 3072]
    monkeypatch.setattr(sim_predict, "UNEVEN_CHECKS", 0)
    blind = predict_launch(*_transpose(tmp_path, 1024, 128), H100)
    assert blind.based_on["short_blocks"] == []
    # three quarters of the grid skip their work: block 0 standing for all of it charges
    # them as working blocks
    assert _execute(over) < 0.9 * _execute(blind)


def test_an_over_launched_grid_is_its_working_run_then_its_idle_run(tmp_path):
    """The 32 x 32 tiles of a 1,024 x 1,024 matrix are blocks 0 to 1,023 of a grid of 32 x
    128: the working blocks come first, and the two runs are predicted apart and added."""
    from kerncast.devices import get_device
    from kerncast.sim._pipeline import DEFAULT_BUDGET
    from kerncast.sim._predict import _predict_launch

    kernel, launch = _transpose(tmp_path, 1024, 128)
    over = predict_launch(kernel, launch, H100)
    runs = over.based_on["segments"]
    assert [(r["first_block"], r["blocks"]) for r in runs] == [(0, 1024), (1024, 3072)]
    fixed = machine_for(get_device(H100)).launch_fixed_seconds()
    apart = [_predict_launch(kernel, launch, H100, [], sm_count=None, machine=None,
                             progress=None, budget=DEFAULT_BUDGET, fixes=frozenset(),
                             span=span).seconds for span in ((0, 1024), (1024, 3072))]
    assert over.seconds == pytest.approx(sum(apart) - fixed)
    assert over.based_on["blocks"] == 4096
    # the covering grid's own prediction is the working run's
    right = predict_launch(*_transpose(tmp_path, 1024, 32), H100)
    assert runs[0]["seconds"] == pytest.approx(right.seconds, rel=0.02)
    # the idle run does no global memory work
    assert runs[1]["bottleneck"] != "memory"


@pytest.mark.parametrize("name", ["matmul_tiled", "branch_divergence", "reduce_tree"])
def test_issue_counts_are_those_of_the_expanded_streams(name, monkeypatch):
    """Where the issue orders only permute the pcs a warp runs, the counts come from the
    trace's executions; they must equal those of every stream expanded in issue order."""
    import numpy as np

    import kerncast.sim._predict as predict

    counted = predict._issued
    seen = []

    def compare(trace, orders):
        got = counted(trace, orders)
        want = np.zeros(len(trace.program.items), np.int64)
        for stream in trace.streams().values():
            pcs = predict._expand(stream, orders, None)[0]
            want += np.bincount(pcs, minlength=len(want))[:len(want)]
        seen.append(np.array_equal(got, want))
        return got

    monkeypatch.setattr(predict, "_issued", compare)
    kernel = get_kernel(name)
    predict_launch(*kernel.instance(kernel.launch("small")), H100)
    assert seen == [True]


def test_a_prediction_that_fails_leaves_no_tool_running_behind_it(monkeypatch):
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    import kerncast.sim._predict as sim_predict
    from kerncast.core import Array, Kernel, Launch

    release = threading.Event()
    started = []
    pool = ThreadPoolExecutor(max_workers=1)

    def slow_sass(program, arch):  # stands for ptxas and nvdisasm, still running
        started.append(pool.submit(release.wait, 5))
        return started[-1]

    monkeypatch.setattr(sim_predict, "_conflicts_soon", slow_sass)
    source = ('extern "C" __global__ void gather(float *y, const int *idx, const float *x) {\n'
              "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  y[i] = x[idx[i]];\n}\n")
    idx = np.full(256, 5000, np.int32)  # every thread reads past the end of x
    arrays = [np.zeros(256, np.float32), idx, np.zeros(100, np.float32)]
    launch = Launch(grid=(1, 1, 1), block=(256, 1, 1), names=("y", "idx", "x"),
                    args=tuple(Array(a.dtype, a.shape, data=a) for a in arrays))
    threading.Timer(0.3, release.set).start()
    with pytest.raises(InputError, match="thread"):
        predict_launch(Kernel("gather", text=source), launch, H100)
    assert started and started[0].done()
    pool.shutdown()


def _predicted_counting_emulations(monkeypatch, name: str, size: str):
    """A corpus launch predicted once on the H100, every emulation noted from then on:
    (the blocks of each emulation, the kernel, its source and launch, the prediction)."""
    calls: list = []
    real = kerncast.emu.emulate
    monkeypatch.setattr(kerncast.emu, "emulate",
                        lambda *a, **k: calls.append(a[3]) or real(*a, **k))
    kernel = get_kernel(name)
    source, launch = kernel.instance(kernel.launch(size))
    return calls, kernel, source, launch, predict_launch(source, launch, "h100")


def test_a_launch_predicted_again_is_not_emulated_again(monkeypatch):
    import kerncast.sim._predict as sim_predict

    calls, kernel, source, launch, first = _predicted_counting_emulations(
        monkeypatch, "copy_vector", "medium")
    emulated = len(calls)
    assert emulated >= 2  # the traced blocks, the check for short blocks, the probes
    fewer = predict_launch(source, launch, "h100", sm_count=32)
    fixed = predict_launch(source, launch, "h100", fixes=frozenset({"occupancy"}))
    assert len(calls) == emulated  # the same blocks, run the same way: kept
    assert predict_launch(source, launch, "h100").seconds == first.seconds
    # the same launch rebuilt is another launch: emulated again, and predicted the same
    sim_predict._EMULATIONS.clear()
    again = kernel.instance(kernel.launch("medium"))[1]
    assert predict_launch(source, again, "h100", sm_count=32).seconds == fewer.seconds
    assert predict_launch(source, again, "h100", fixes=frozenset({"occupancy"})).seconds \
        == fixed.seconds
    assert len(calls) == 2 * emulated


def test_a_data_dependent_round_is_traced_from_blocks_spread_over_the_grid():
    from kerncast.sim import choose_blocks

    # a kernel whose work cannot depend on its data runs block 0's stream everywhere
    assert choose_blocks(1000, 4, 132, dependent=False) == ([0, 132, 264, 396], [0] * 4)
    # spread over the grid, its last block traced by its neighbour: a grid rounded up to
    # whole blocks leaves the last one partly idle (black_scholes: one of two traced)
    stands, sources = choose_blocks(19532, 2, 132, dependent=True)
    assert stands == [0, 132] and sources == [0, 19530]
    _, sources = choose_blocks(1000, 8, 132, dependent=True)
    assert sources == [0, 143, 285, 428, 571, 714, 856, 998]
    # a grid the round covers whole is traced whole, its last block included
    assert choose_blocks(3, 8, 132, dependent=True)[1] == [0]
    assert choose_blocks(3, 3, 1, dependent=True)[1] == [0, 1, 2]
    # blocks of one warp: the round's 32 blocks each traced from a block of its own (a
    # sample of 64 warps where the round holds them), not 8 blocks' 8 warps used 4 times
    _, sources = choose_blocks(65536, 32, 132, dependent=True, warps_per_block=1)
    assert len(set(sources)) == 32
    assert len(set(choose_blocks(65536, 32, 132, True, warps_per_block=2)[1])) == 32
    assert len(set(choose_blocks(65536, 8, 132, True, warps_per_block=8)[1])) == 8


def test_the_collector_is_paused_while_predictions_run_and_restored_after():
    import gc
    import threading

    from kerncast.sim._predict import collector_paused

    assert gc.isenabled()
    inside = threading.Event()
    leave = threading.Event()

    def other():
        with collector_paused():
            inside.set()
            leave.wait(5)

    worker = threading.Thread(target=other)
    worker.start()
    inside.wait(5)
    collected: list[int] = []

    def note(phase, info):
        if phase == "start":
            collected.append(info["generation"])

    gc.callbacks.append(note)
    try:
        with collector_paused():
            assert not gc.isenabled()
    finally:
        gc.callbacks.remove(note)
    assert not gc.isenabled()  # the other prediction still runs
    assert collected == [0]  # the young objects, as the first one ended
    leave.set()
    worker.join()
    assert gc.isenabled()
    gc.disable()  # a caller's own choice is kept
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a failed prediction")
    assert gc.isenabled()


def test_a_data_dependent_launch_predicted_again_is_emulated_again_only_for_a_callers_data(
        monkeypatch):
    import numpy as np

    import kerncast.sim._predict as sim_predict
    from kerncast.core import Array

    calls, _, source, launch, first = _predicted_counting_emulations(
        monkeypatch, "bfs_queue_expand", "small")
    emulated = len(calls)
    # its inputs are generated, the same each time: its emulations are kept
    fewer = predict_launch(source, launch, "h100", sm_count=32)
    assert len(calls) == emulated and fewer.seconds >= first.seconds
    # the same values held as a caller's arrays, which the caller may change: run again
    values = launch.materialise(generate=True)
    held = dataclasses.replace(launch, args=tuple(
        Array.of(np.array(v)) if isinstance(a, Array) else a
        for a, v in zip(launch.args, values)))
    assert predict_launch(source, held, "h100").seconds == first.seconds
    assert predict_launch(source, held, "h100").seconds == first.seconds
    assert len(calls) == 3 * emulated
    # and nothing is kept for it: the generated launch's emulations were let go
    assert sim_predict._EMULATIONS == []


def _update_in_place(intent: str | None, n: int = 2 << 20):
    """``y = 2 y + x`` over ``n`` floats (8 MB of each): ``y`` of ``intent``."""
    from kerncast.core import Array, Kernel, Launch

    source = ('extern "C" __global__ void twice(float *y, const float *x) {\n'
              "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  y[i] = 2 * y[i] + x[i];\n}\n")
    launch = Launch(grid=(n // 256, 1, 1), block=(256, 1, 1), names=("y", "x"),
                    args=(Array("float32", (n,), intent=intent),
                          Array("float32", (n,), intent="in")))
    return predict_launch(Kernel("twice", text=source), launch, H100)


def test_a_buffer_copied_back_before_each_launch_is_read_from_the_l2():
    restored, kept = _update_in_place("inout"), _update_in_place("in")
    assert restored.based_on["l2_sharing"]["at_start"].startswith("y in the L2: copied back")
    assert kept.based_on["l2_sharing"]["at_start"] == "cold"
    # y's 8 MB neither come from DRAM nor go back to it during the launch; x's do
    assert restored.based_on["work"]["dram_bytes"] == pytest.approx(
        kept.based_on["work"]["dram_bytes"] / 3, rel=0.1)
    assert restored.seconds < kept.seconds
    # a user's array of no stated intent is copied back too, as the measurements do
    assert _update_in_place(None).seconds == pytest.approx(restored.seconds)

"""Calibration: the micro-benchmark source, the curve analysis and the file format."""

import shutil
import subprocess

import numpy as np
import pytest

from kerncast import InputError
from kerncast.calibrate import (
    Calibration,
    InstructionTiming,
    cache_size_from_curve,
    fit_line,
    granularity_from_curve,
    load_calibration,
)
from kerncast.calibrate import MICROBENCHMARKS
from kerncast.calibrate._run import ARITH_OPS, SHARED_RATES


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_microbenchmarks_compile_and_define_every_kernel(tmp_path):
    ptx = tmp_path / "ubench.ptx"
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90", str(MICROBENCHMARKS), "-o", str(ptx)], check=True)
    text = ptx.read_text()
    for suffix, _, _ in ARITH_OPS.values():
        assert f".entry lat_{suffix}(" in text and f".entry tput_{suffix}(" in text
    for name in ("chase_l1", "chase_l2", "chase_shared", "bw_read", "bw_l2", "bw_shared",
                 "bw_read_once", "bw_write_once", "bw_copy_once",
                 "atomic_global", "atomic_random", "atomic_shared", "barrier_loop",
                 "empty_kernel", "spin"):
        assert f".entry {name}(" in text
    for kernel, _ in SHARED_RATES:
        assert f".entry {kernel}(" in text
    # the shared accesses are volatile: none is merged or dropped
    assert "ld.volatile.shared.v4.u32" in text and "st.volatile.shared.v2.u32" in text
    # The chains must be exactly the PTX instruction named, not something optimised away.
    assert "fma.rn.f32" in text and "sin.approx.f32" in text and "ld.global.cg.u32" in text


def test_cache_size_is_the_last_footprint_at_hit_latency():
    kib = 1024
    curve = [[8 * kib, 30], [64 * kib, 31], [192 * kib, 33], [256 * kib, 120], [512 * kib, 260],
             [1024 * kib, 262]]
    assert cache_size_from_curve(curve) == 192 * kib
    assert np.isnan(cache_size_from_curve([[1, 30], [2, 31]]))


def test_granularity_is_where_latency_reaches_the_miss_latency():
    curve = [[4, 40], [8, 70], [16, 130], [32, 250], [64, 252], [128, 251]]
    assert granularity_from_curve(curve) == 32


def test_fit_line():
    intercept, slope = fit_line([1, 2, 3], [5, 7, 9])
    assert intercept == pytest.approx(3) and slope == pytest.approx(2)


def test_calibration_round_trips(tmp_path):
    cal = Calibration(device="h100-sxm", provenance={"measured_at": "2026-11-22"},
                      instructions={"fp32": InstructionTiming(4.0, 128.0)},
                      memory={"dram_latency_cycles": 600.0}, launch={"empty_kernel_s": 3.8e-6})
    path = tmp_path / "cal.json"
    cal.save(path)
    again = load_calibration(path)
    assert again == cal
    assert again.instruction("fp32").throughput_per_clk_sm == 128.0
    with pytest.raises(InputError, match=r"has no instruction class 'fp128'"):
        again.instruction("fp128")


def test_missing_calibration_says_how_to_make_one():
    with pytest.raises(InputError,
                       match=r"no calibration for 'gtx-280'.*kerncast calibrate --device gtx-280"):
        load_calibration("gtx-280")


def test_broken_calibration_file_is_named(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"device": "x"}')
    with pytest.raises(InputError, match=r"bad.json is not a valid kerncast calibration"):
        load_calibration(path)


@pytest.mark.gpu
def test_calibration_runs_on_a_gpu(tmp_path):
    from kerncast.calibrate import run_calibration
    from kerncast.devices import get_device

    cal = run_calibration(get_device("h100"), progress=lambda m: None)
    assert cal.instructions["fp32"].throughput_per_clk_sm > 0
    assert cal.memory["dram_latency_cycles"] > cal.memory["l2_hit_latency_cycles"]
    assert len(cal.curves["dram_latency_vs_inflight"]) == 24
    spread = [c for _, c in cal.curves["dram_latency_quantiles"]]
    assert len(spread) == 16 and spread == sorted(spread)
    assert spread[0] < cal.memory["dram_latency_cycles"] < spread[-1]
    assert [w for w, _, _ in cal.curves["block_turnaround_cycles_vs_warps"]] == \
        [1, 2, 4, 8, 16, 32]


def test_only_names_the_part_it_can_measure_alone(capsys):
    from kerncast.cli import main

    assert main(["calibrate", "--device", "h100", "--only", "caches"]) == 2
    err = capsys.readouterr().err
    assert "'atomics'" in err and "'access'" in err and "'dram'" in err and "'shared'" in err
    assert "'bandwidth'" in err and "'spread'" in err


def test_shipped_h200_dram_latency_grows_with_its_load():
    curve = np.array(load_calibration("h200").curves["dram_latency_vs_inflight"])
    inflight, warps, gbs, cycles = curve.T
    assert list(inflight) == sorted(inflight)
    # over the same warps, more bytes in flight move more bytes a second (Little's law)
    many = warps == 64
    assert np.all(np.diff(gbs[many]) > 0)
    peak = gbs.max()
    assert gbs[0] < 0.05 * peak and cycles[0] < 1000  # one line a warp over two warps
    near_peak = cycles[gbs > 0.95 * peak]
    assert near_peak.min() > 2 * cycles[0]  # a saturated DRAM queues


def test_shipped_h200_turnaround_grows_with_the_blocks_warps():
    curve = np.array(load_calibration("h200").curves["block_turnaround_cycles_vs_warps"])
    warps, cycles, slope = curve.T
    assert list(warps) == [1, 2, 4, 8, 16, 32]
    assert cycles[-1] > cycles[0] + 100 and np.allclose(slope, 1.0, atol=0.01)
    assert load_calibration("h200").launch["block_turnaround_cycles"] == cycles[0]


def test_shipped_h100_atomic_curve_grows_with_the_addresses():
    curve = load_calibration("h100-sxm").curves["atomic_global_per_s_vs_addresses"]
    n, rate = np.array(curve).T
    assert list(n) == sorted(n) and n[0] == 1
    assert rate[-1] > 10 * rate[0]  # one word serialises; 65,536 spread over many units


def test_shipped_h200_shared_path_takes_a_cycle_per_128_bytes():
    memory = load_calibration("h200").memory
    for kind in ("load", "store"):
        cycles = [memory[f"shared_cycles_{kind}_{width}"] for width in (4, 8, 16)]
        # a warp's 4-, 8- and 16-byte accesses move 128, 256 and 512 bytes
        assert np.allclose(cycles, [1, 2, 4], rtol=0.05)
    # one word for every lane, and no lane at all, still take the path's cycle; 16 bytes
    # for every lane, or for each half-warp, two
    assert memory["shared_cycles_broadcast_4"] == pytest.approx(1.0, rel=0.05)
    assert memory["shared_cycles_broadcast_16"] == pytest.approx(2.0, rel=0.05)
    assert memory["shared_cycles_halves_16"] == pytest.approx(2.0, rel=0.05)
    assert memory["shared_cycles_off_4"] == pytest.approx(1.0, rel=0.05)


@pytest.mark.parametrize("device", ["h100-sxm", "h200"])
def test_shipped_dram_ceilings_are_the_faster_shape(device):
    memory = load_calibration(device).memory
    for stream in ("read", "write", "copy"):
        ceiling, strided = memory[f"dram_{stream}_gbs"], memory[f"dram_{stream}_strided_gbs"]
        assert ceiling >= strided
    # writes and copies of blocks dispatched in order beat grid-stride loops
    assert memory["dram_write_gbs"] > 1.05 * memory["dram_write_strided_gbs"]
    assert memory["dram_copy_gbs"] > 1.05 * memory["dram_copy_strided_gbs"]


def test_shipped_h200_dram_ceilings_were_measured_in_both_shapes():
    memory = load_calibration("h200").memory
    for stream in ("read", "write", "copy"):
        assert memory[f"dram_{stream}_gbs"] == max(memory[f"dram_{stream}_once_gbs"],
                                                   memory[f"dram_{stream}_strided_gbs"])


def test_h100_ceilings_say_they_are_adopted_until_measured():
    cal = load_calibration("h100-sxm")
    adopted = cal.provenance["bandwidth_adopted"]
    assert adopted["from"] == "h200" and "--only bandwidth" in adopted["why"]
    for stream, ratio in adopted["ratios_once_over_strided"].items():
        assert cal.memory[f"dram_{stream}_gbs"] == pytest.approx(
            cal.memory[f"dram_{stream}_strided_gbs"] * ratio, abs=0.1)


def test_shipped_h200_dram_latency_spread_is_centred_on_its_dram_latency():
    cal = load_calibration("h200")
    quantiles, cycles = np.array(cal.curves["dram_latency_quantiles"]).T
    assert len(quantiles) == 16
    assert np.allclose(quantiles, (np.arange(16) + 0.5) / 16, atol=1e-4)
    assert (np.diff(cycles) >= 0).all()
    # single reads at light load average the pointer chase's latency, and spread over
    # hundreds of cycles (measured: from about 510 to 1,000)
    assert cycles.mean() == pytest.approx(cal.memory["dram_latency_cycles"], rel=0.05)
    assert cycles[-1] - cycles[0] > 300
    assert cal.provenance["spread_updated"]["part"] == "spread"

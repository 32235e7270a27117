"""The simulator's machine: a device spec with its (own or adapted) calibration."""

from __future__ import annotations

import dataclasses

import pytest

from kerncast import InputError
from kerncast.devices import get_device
from kerncast.sim import calibrated_devices, machine_for
from kerncast.sim._machine import PIPES, adaptation


@pytest.fixture(scope="module")
def h100():
    return machine_for("h100")


def test_shipped_calibrations_include_the_h100_and_h200():
    assert {"h100-sxm", "h200"} <= set(calibrated_devices())


def test_a_calibrated_device_uses_its_own_calibration(h100):
    assert h100.adapted_from is None and h100.calibration.device == "h100-sxm"
    assert h100.sm_count == 132 and h100.schedulers == 4
    # the clock the calibration saw, close to the spec's boost clock
    assert h100.clock_hz == pytest.approx(1.98e9, rel=0.05)


def test_issue_costs_are_whole_cycles_on_known_pipes(h100):
    for cls, cycles in h100.issue.items():
        assert cycles >= 1 and cycles == int(cycles), cls
        assert h100.pipe_of[cls] in PIPES
        assert h100.latency[cls] >= 1
    # 128 fp32 lanes per SM: one warp instruction per scheduler per cycle; fp64 at half
    assert h100.issue["fp32"] == 1 and h100.issue["fp64"] == 2
    assert h100.issue["sfu"] > h100.issue["fp32"]


def test_memory_latencies_grow_with_distance(h100):
    assert 0 < h100.l1_latency < h100.l2_latency < h100.dram_latency
    assert h100.shared_latency < h100.l2_latency


def test_bandwidths_are_physical(h100):
    dram = h100.dram_bytes_per_cycle() * h100.clock_hz
    spec = get_device("h100").memory.peak_bandwidth_gbs * 1e9
    assert 0.7 * spec < dram <= spec  # achieved, not above the datasheet peak
    assert h100.l2_bytes_per_cycle() > h100.dram_bytes_per_cycle()
    # one SM cannot pull the whole GPU's DRAM bandwidth
    assert h100.sm_dram_bytes_per_cycle() < h100.dram_bytes_per_cycle()


def test_barrier_cost_does_not_fall_with_more_warps(h100):
    # the measured loop's period; the release figures are what it leaves past the
    # simulated loop's own issue (tests/sim/test_barrier.py), which steps up at 8 warps
    periods = [h100.calibration.sync[f"barrier_cycles_{w}_warps"] for w in (1, 2, 4, 8, 16, 32)]
    assert all(b >= a for a, b in zip(periods, periods[1:]))
    costs = [h100.barrier_cycles(w) for w in (1, 2, 4, 8, 16, 32)]
    assert all(0 < c < p for c, p in zip(costs, periods)) and costs[-1] > 4 * costs[0]


def test_the_shared_path_takes_the_calibrated_cycles_of_the_same_architecture(h100):
    h200 = machine_for("h200")
    assert h200.shared_path_cycles() == pytest.approx((1.0, 1.0), rel=0.05)  # measured
    assert "shared_cycles_load_4" not in h100.calibration.memory
    assert h100.shared_path_cycles() == h200.shared_path_cycles()  # Hopper's, borrowed
    assert machine_for("a100-80gb").shared_path_cycles() == (1.0, 1.0)  # none: a cycle


def test_launch_cost_is_fixed_plus_per_block(h100):
    fixed = h100.launch_fixed_seconds()
    assert 1e-6 < fixed < 2e-5
    assert h100.launch_seconds(0) == pytest.approx(fixed)
    assert h100.launch_seconds(100_000) > h100.launch_seconds(1000) > fixed
    assert h100.dispatch_seconds(2000) == pytest.approx(2 * h100.dispatch_seconds(1000))


def test_a_blocks_turnaround_comes_from_a_calibration_of_the_same_architecture(h100):
    h200 = machine_for("h200")
    own, source = h200.block_turnaround()
    assert source == "h200" and 100 < own < 5000  # measured: hundreds of cycles
    assert "block_turnaround_cycles" not in h100.calibration.launch
    assert h100.block_turnaround() == (own, "h200")  # Hopper's, borrowed
    ampere = machine_for("a100-80gb")
    assert ampere.block_turnaround() == (0.0, None)  # no Ampere calibration has one


def test_a_blocks_turnaround_grows_with_its_warps_along_the_calibrated_curve(h100):
    h200 = machine_for("h200")
    curve = h200.calibration.curves["block_turnaround_cycles_vs_warps"]
    for warps, cycles, _ in curve:
        assert h200.block_turnaround(int(warps)) == (pytest.approx(cycles), "h200")
    (w0, c0, _), (w1, c1, _) = curve[3], curve[4]  # between two measured block sizes
    middle = h200.block_turnaround(int((w0 + w1) / 2))[0]
    assert middle == pytest.approx(c0 + (c1 - c0) * ((w0 + w1) / 2 - w0) / (w1 - w0))
    assert h200.block_turnaround(32)[0] > h200.block_turnaround(1)[0] + 50
    assert h100.block_turnaround(16) == h200.block_turnaround(16)  # Hopper's, borrowed


def test_the_drams_loaded_latency_counts_the_probes_lightest_warps_below_saturation(h100):
    h200 = machine_for("h200")
    shares, cycles, source = h200.dram_load_latency()
    assert source == "h200"
    assert h100.dram_load_latency() is None  # the DRAM is the device's own: not borrowed
    curve = h200.calibration.curves["dram_latency_vs_inflight"]
    peak = max(gbs for _, _, gbs, _ in curve)
    # one point per level of bytes in flight (its most warps), none past saturation
    levels = {inflight for inflight, _, gbs, _ in curve if gbs / peak <= 0.9}
    assert len(shares) == len(levels) and list(shares) == sorted(shares)
    assert max(shares) <= 0.9 and cycles[0] == 0.0 and min(cycles) >= 0.0
    most = max((w, gbs, c) for i, w, gbs, c in curve if i == 8192.0)  # 64 warps of one load
    lightest = min(curve, key=lambda p: p[2])[3]
    assert cycles[shares.index(most[1] / peak)] == pytest.approx(max(0.0, most[2] - lightest))
    assert cycles[-1] > 100  # near saturation the latency has grown by hundreds of cycles
    assert machine_for("a100-80gb").dram_load_latency() is None  # no Ampere probe


def test_the_dram_spread_is_the_calibrated_quantiles_about_their_mean(h100):
    h200 = machine_for("h200")
    cycles, source = h200.dram_spread()
    measured = [c for _, c in h200.calibration.curves["dram_latency_quantiles"]]
    assert source == "h200" and len(cycles) == len(measured)
    assert sum(cycles) == pytest.approx(0.0, abs=1e-6)
    assert cycles[-1] - cycles[0] == pytest.approx(measured[-1] - measured[0])


def test_the_h100_borrows_hoppers_dram_spread_scaled_by_its_dram_latency(h100):
    h200 = machine_for("h200")
    own, _ = h200.dram_spread()
    borrowed, source = h100.dram_spread()
    assert "dram_latency_quantiles" not in h100.calibration.curves and source == "h200"
    ratio = h100.dram_latency / h200.dram_latency
    assert borrowed == pytest.approx([c * ratio for c in own])
    # a device predicted from another's calibration does not take its own back: the H200
    # from the H100's has none (the H100 has none of its own), as no Ampere device has
    assert machine_for("h200", calibration="h100-sxm").dram_spread() is None
    assert machine_for("a100-80gb").dram_spread() is None


def test_a_calibrated_device_says_which_figures_it_borrows(h100):
    assert h100.borrowed() == {"the block slot's turnaround": "h200",
                               "the spread of single DRAM reads' latencies": "h200"}
    assert machine_for("h200").borrowed() == {}


def test_dram_rates_are_the_calibrated_read_write_and_copy_streams(h100):
    read, write, copy = h100.dram_rates()
    assert read * h100.clock_hz / 1e9 == pytest.approx(h100.mem("dram_read_gbs", 0.0))
    assert write * h100.clock_hz / 1e9 == pytest.approx(h100.mem("dram_write_gbs", 0.0))
    assert copy * h100.clock_hz / 1e9 == pytest.approx(h100.mem("dram_copy_gbs", 0.0))


def test_h200_has_more_dram_bandwidth_and_the_same_sm(h100):
    h200 = machine_for("h200")
    assert h200.dram_bytes_per_cycle() > 1.2 * h100.dram_bytes_per_cycle()
    assert h200.issue == h100.issue and h200.sm_count == h100.sm_count


def test_an_uncalibrated_device_borrows_an_adapted_calibration(h100):
    a100 = machine_for("a100-80gb")
    assert a100.adapted_from == "h100-sxm"
    spec = get_device("a100-80gb")
    assert a100.clock_hz == pytest.approx(spec.compute.boost_clock_mhz * 1e6)
    # bandwidths scale with the datasheet peaks
    ratio = spec.memory.peak_bandwidth_gbs / get_device("h100").memory.peak_bandwidth_gbs
    got = a100.dram_bytes_per_cycle() * a100.clock_hz
    want = h100.dram_bytes_per_cycle() * h100.clock_hz * ratio
    assert got == pytest.approx(want, rel=1e-6)


def test_an_adapted_calibration_lists_what_it_assumes(h100):
    a100 = machine_for("a100-80gb")
    spec, source = get_device("a100-80gb"), get_device("h100")
    said = "\n".join(a100.assumptions)
    ratio = spec.memory.peak_bandwidth_gbs / source.memory.peak_bandwidth_gbs
    assert f"DRAM read, write and copy bandwidths: h100-sxm's x{ratio:.3g}" in said
    assert "fp32 x0.5" in said and "fp64 x0.5" in said  # GA100's FP32 and FP64 halves
    assert "the same cycles as on h100-sxm" in said
    assert f"boost clock, {spec.compute.boost_clock_mhz:g} MHz" in said
    assert a100.assumptions == adaptation(source, spec)
    assert h100.assumptions == () and machine_for("h200").assumptions == ()
    assert machine_for("h200", "h100-sxm").assumptions == adaptation(source, get_device("h200"))


def test_another_devices_calibration_can_be_named_and_is_adapted_to_the_spec(h100):
    m = machine_for("h100", "h200")
    assert m.device.key == "h100-sxm" and m.adapted_from == "h200"
    # the H100's own calibration, named for the H200, scales with the datasheet peaks
    h200 = machine_for("h200", "h100-sxm")
    assert h200.adapted_from == "h100-sxm" and h200.device.key == "h200"
    ratio = h200.device.memory.peak_bandwidth_gbs / h100.device.memory.peak_bandwidth_gbs
    got = h200.dram_bytes_per_cycle() * h200.clock_hz
    assert got == pytest.approx(h100.dram_bytes_per_cycle() * h100.clock_hz * ratio, rel=1e-6)
    assert machine_for("h100", "h100-sxm").adapted_from is None


def test_unknown_device_is_bad_input():
    with pytest.raises(InputError, match="unknown device 'no-such-gpu'"):
        machine_for("no-such-gpu")


@pytest.mark.parametrize("device, curve_name, method, at, between", [
    ("h100", "atomic_global_per_s_vs_addresses", "atomic_rate_over", 256, (256, 1024, 4096)),
    ("h200", "atomic_global_per_s_vs_lines", "atomic_rate_over_lines", 8, (16, 32, 64)),
])
def test_atomic_rates_interpolate_the_calibrated_curves(device, curve_name, method, at, between):
    m = machine_for(device)
    curve = m.calibration.curves[curve_name]
    rates = dict((int(n), r) for n, r in curve)
    assert getattr(m, method)(at) == pytest.approx(rates[at])
    low, x, high = between
    got = getattr(m, method)(x)  # log-log between two points of the curve
    assert min(rates[low], rates[high]) < got < max(rates[low], rates[high])
    assert getattr(m, method)(int(curve[-1][0]) * 2) is None  # past the curve: no bound
    bare = dataclasses.replace(m.calibration, curves={})
    assert getattr(dataclasses.replace(m, calibration=bare), method)(at) is None

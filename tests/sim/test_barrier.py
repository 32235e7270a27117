from dataclasses import replace

import pytest

from kerncast.calibrate import load_calibration
from kerncast.sim._barrier import simulated_period
from kerncast.sim._machine import RELEASE, machine_for


@pytest.mark.parametrize("device", ["h100", "h200"])
@pytest.mark.parametrize("warps", [1, 8, 32])
def test_the_shipped_release_figures_give_the_measured_barrier_loop(device, warps):
    """Simulated with the shipped release cost, the calibration's barrier loop takes the
    period measured on the GPU (tools/barrier_release.py derives the figures again where
    the simulation has changed)."""
    cal = machine_for(device).calibration
    measured = cal.sync[f"barrier_cycles_{warps}_warps"]
    assert simulated_period(device, cal, warps) == pytest.approx(measured, rel=0.03)


def test_a_release_is_what_the_measured_period_leaves_past_the_loops_own_issue():
    cal = load_calibration("h200")
    machine = machine_for("h200")
    for warps in (1, 2, 4, 8, 16, 32):
        release = cal.sync[f"{RELEASE}{warps}_warps"]
        assert 0 < release < cal.sync[f"barrier_cycles_{warps}_warps"]
        assert machine.barrier_cycles(warps) == release
    # a calibration without release figures charges its measured periods
    measured_only = {k: v for k, v in cal.sync.items() if not k.startswith(RELEASE)}
    old = machine_for("h200", replace(cal, sync=measured_only))
    assert old.barrier_cycles(32) == cal.sync["barrier_cycles_32_warps"]

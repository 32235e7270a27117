"""Occupancy: equal to the CUDA driver's calculator on the measured GPUs, row by row."""

import csv
from pathlib import Path

import pytest

from kerncast import InputError
from kerncast.devices import get_device, occupancy

FIXTURES = Path(__file__).with_name("fixtures")
MEASURED = {"h100-sxm": "occupancy_h100.csv", "h200": "occupancy_h200.csv"}


def _rows(device: str) -> list[dict]:
    with open(FIXTURES / MEASURED[device]) as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("device", sorted(MEASURED))
def test_fixture_covers_the_required_grid(device):
    rows = _rows(device)
    assert {int(r["block"]) for r in rows} >= {32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024}
    assert {int(r["dynamic_shared"]) // 1024 for r in rows} >= {0, 1, 4, 12, 24, 48, 100, 160, 227}
    regs = {int(r["registers"]) for r in rows}
    assert len(regs) >= 12 and min(regs) <= 16 and max(regs) == 255
    assert all(r["driver"] and r["date"] for r in rows)
    assert get_device(rows[0]["device"]).key == device  # the driver's name is an alias


@pytest.mark.parametrize("device", sorted(MEASURED))
def test_blocks_per_sm_equal_the_driver_for_every_row(device):
    mismatches = []
    for r in _rows(device):
        shared = int(r["static_shared"]) + int(r["dynamic_shared"])
        got = occupancy(device, int(r["block"]), int(r["registers"]), shared).blocks_per_sm
        if got != int(r["blocks_per_sm"]):
            mismatches.append((r["block"], r["registers"], shared, r["blocks_per_sm"], got))
    assert not mismatches, f"{len(mismatches)} rows differ, e.g. {mismatches[:5]}"


def test_seed_example_gtx580():
    # Sampling seed, section 4: 256 work-items per work-group gives 6 resident
    # work-groups at full occupancy, and 5 at an occupancy of 0.833.
    full = occupancy("gtx580", 256, 20, 0)
    assert (full.blocks_per_sm, full.occupancy) == (6, 1.0)
    five = occupancy("gtx580", 256, 24, 0)
    assert five.blocks_per_sm == 5
    assert five.occupancy == pytest.approx(0.833, abs=1e-3)
    assert five.limiting == "registers"


def test_h100_documented_example():
    occ = occupancy("h100", 256, 32, 0)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limiting) == (8, 64, "warps")


def test_too_many_registers_gives_zero_blocks():
    occ = occupancy("h100", 1024, 255, 0)
    assert occ.blocks_per_sm == 0 and occ.limiting == "registers"


def test_carveout_preference_limits_shared_memory():
    default = occupancy("h100", 128, 32, 20 * 1024)
    small = occupancy("h100", 128, 32, 20 * 1024, carveout_percent=25)
    assert default.blocks_per_sm == 10
    assert small.shared_per_sm_used == 64 * 1024
    assert small.blocks_per_sm == 3


@pytest.mark.parametrize(
    "args, message",
    [
        ((0, 32, 0), r"block size 0 is not positive; choose a block of 1 to 1024 threads"),
        ((2048, 32, 0), r"block size 2048 exceeds the h100-sxm limit of 1024 threads per block"),
        ((256, -1, 0), r"-1 registers per thread is outside 0..255"),
        ((256, 32, 300_000), r"300000 bytes of shared memory per block is outside 0..232448"),
        ((256, 32, -5), r"-5 bytes of shared memory"),
    ],
)
def test_bad_input_is_named(args, message):
    with pytest.raises(InputError, match=message):
        occupancy("h100", *args)

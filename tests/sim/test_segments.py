"""Grids whose working blocks come first: finding the split, the runs' anchors, joining."""

from __future__ import annotations

import pytest

from kerncast.sim._predict import StaticResult
from kerncast.sim._segments import SPLIT_POINTS, grid_split, joined, segment_anchor
from kerncast.sim._sharing import probe_blocks


def _long_below(limit: int, calls: list | None = None):
    def long(chosen):
        if calls is not None:
            calls.append(list(chosen))
        return {b for b in chosen if b < limit}
    return long


@pytest.mark.parametrize("limit", [1, 2, 777, 1234, 5000, 9998])
def test_the_split_is_the_first_short_block(limit):
    calls: list = []
    assert grid_split(_long_below(limit, calls), 10_000) == limit
    # the places together, then one block per step of the bisection
    assert len(calls[0]) == SPLIT_POINTS - 1 and all(len(c) == 1 for c in calls[1:])
    assert len(calls) <= 1 + 10


def test_no_split_where_every_place_works_or_short_and_working_places_interleave():
    assert grid_split(_long_below(10**9), 10_000) is None
    assert grid_split(lambda chosen: {b for b in chosen if b % 2 == 0}, 10_000) is None
    # working again after short places: no order to split on
    assert grid_split(lambda chosen: {b for b in chosen if b < 2000 or b > 6000}, 10_000) is None
    assert grid_split(_long_below(0), 2) is None  # block 0 and the grid's last only


def test_no_split_where_an_emulation_fails():
    assert grid_split(lambda chosen: None, 10_000) is None

    def fails_later(chosen):
        return None if len(chosen) == 1 else {b for b in chosen if b < 500}
    assert grid_split(fails_later, 10_000) is None


def test_the_grid_last_block_is_not_a_place():
    seen: list = []
    grid_split(_long_below(10**9, seen), 100)
    assert max(seen[0]) == 98


def test_a_run_is_anchored_where_its_neighbours_do_not_wrap():
    grid = (4, 3, 2)
    assert segment_anchor(0, 24, grid) == 0
    assert segment_anchor(5, 10, grid) == 5
    assert segment_anchor(3, 10, grid) == 4      # the end of a row: the next row's first
    assert segment_anchor(8, 10, grid) == 12     # the last row of a plane: the next plane
    assert segment_anchor(8, 3, grid) == 8       # ... unless the run ends first
    assert segment_anchor(7, 1, (8,)) == 7       # a run of one block at the grid's end


def test_probes_are_the_anchor_next_neighbours_within_the_grid():
    grid = (4, 3, 2)
    assert probe_blocks(grid) == [1, 4, 12]
    assert probe_blocks(grid, 5) == [6, 9, 17]
    assert probe_blocks(grid, 3) == [7, 15]       # no x neighbour past the row's end
    assert probe_blocks(grid, 23) == []           # the last block: none
    assert probe_blocks((8,), 3) == [4]


def _result(seconds, parts, bottleneck, **based_on):
    return StaticResult(seconds, parts, bottleneck, {"sm_count": 132, **based_on})


def test_joined_runs_add_their_times_with_the_fixed_launch_cost_once():
    work = _result(10e-6, {"compute": 4e-6, "memory": 8e-6, "launch": 2e-6, "latency": 0.0},
                   "memory", round_cycles=5000.0, waves=3,
                   work={"flops_fp32": 100.0, "flops_fp64": 0.0, "dram_bytes": 4096.0})
    idle = _result(6e-6, {"compute": 3e-6, "memory": 0.0, "launch": 2e-6, "latency": 1e-6},
                   "compute", round_cycles=1600.0, waves=9,
                   work={"flops_fp32": 20.0, "flops_fp64": 0.0, "dram_bytes": 0.0})
    out = joined([work, idle], [(0, 100), (100, 300)], fixed=1.5e-6)
    assert out.seconds == pytest.approx(14.5e-6)
    assert out.breakdown["launch"] == pytest.approx(2.5e-6)
    assert out.breakdown["memory"] == pytest.approx(8e-6)
    assert out.breakdown["compute"] == pytest.approx(7e-6)
    assert out.bottleneck == "memory"
    assert out.based_on["blocks"] == 400 and out.based_on["round_cycles"] == 5000.0
    assert [s["first_block"] for s in out.based_on["segments"]] == [0, 100]
    assert [s["waves"] for s in out.based_on["segments"]] == [3, 9]
    # the roofline places the whole launch: both runs' operations and bytes
    assert out.based_on["work"] == {"flops_fp32": 120.0, "flops_fp64": 0.0, "dram_bytes": 4096.0}
    assert work.based_on.get("segments") is None  # the run's own prediction untouched
    assert work.based_on["work"]["flops_fp32"] == 100.0

"""What-if fixes (``kerncast.sim._whatif``): each transformation on hand-made requests and
streams, and each fix through the simulator on a corpus kernel that has the limiter."""

from __future__ import annotations

import numpy as np
import pytest

from kerncast import InputError
from kerncast.corpus import get_kernel
from kerncast.devices import get_device, occupancy
from kerncast.sim import predict_launch
from kerncast.sim._memory import RequestCost
from kerncast.sim._whatif import (FIXES, check_fixes, fix_costs, fix_streams,
                                  fixed_blocks_per_sm)
from kerncast.trace import KINDS, SPACES
from kerncast.trace._trace import WarpStream

LOAD, SHARED, GLOBAL = KINDS.index("load"), SPACES.index("shared"), SPACES.index("global")


def test_unknown_fix_is_named_with_the_choices():
    assert check_fixes(["occupancy"]) == {"occupancy"}
    with pytest.raises(InputError, match="unknown what-if fix coalescing; choose from "
                                         "bank-conflicts"):
        check_fixes(["coalescing", "occupancy"])


def test_bank_conflicts_take_the_fewest_wavefronts_the_bytes_need():
    costs = {(0, 0, 1): RequestCost(LOAD, SHARED, (), 1, 32, 1.0, nbytes=128),   # 32-way
             (0, 1, 1): RequestCost(LOAD, SHARED, (), 1, 4, 1.0, nbytes=256),    # 8-byte lanes
             (0, 2, 1): RequestCost(LOAD, SHARED, (), 1, 1, 1.0, nbytes=512)}    # none to remove
    fixed = fix_costs(costs, frozenset({"bank-conflicts"}))
    assert [c.wavefronts for c in fixed.values()] == [1, 2, 1]
    assert fix_costs(costs, frozenset({"uncoalesced"})) == costs


def test_uncoalesced_requests_move_only_the_sectors_their_bytes_fill():
    strided = RequestCost(LOAD, GLOBAL, tuple(range(0, 256, 8)), 32, 1, 1.0, nbytes=128)
    aligned = RequestCost(LOAD, GLOBAL, (0, 1, 2, 3), 1, 1, 1.0, nbytes=128)
    fixed = fix_costs({(0, 0, 1): strided, (0, 1, 1): aligned}, frozenset({"uncoalesced"}))
    assert fixed[(0, 0, 1)].lines == 1 and fixed[(0, 0, 1)].traffic == pytest.approx(4 / 32)
    assert fixed[(0, 0, 1)].sectors == strided.sectors  # the cache keeps the real sectors
    assert fixed[(0, 1, 1)] == aligned


def _stream(runs: list[tuple[int, int, int]]) -> WarpStream:
    start, end, active = (np.array(col, np.int64) for col in zip(*runs))
    return WarpStream(0, start, end, active, np.arange(len(runs)))


def test_divergent_segments_issue_their_share_of_full_warps():
    # a 4-way split: four branches of a loop, each run 8 times by 8 of 32 lanes
    runs = [(0, 4, 32)] + [(10 + 10 * b, 15 + 10 * b, 8) for b in range(4) for _ in range(8)]
    fixed = fix_streams({0: _stream(runs)})[0]
    assert fixed.instructions == 4 + 4 * 2 * 5  # each branch twice (8 x 8/32)
    uniform = _stream([(0, 4, 32), (10, 15, 32)])
    assert fix_streams({0: uniform})[0] is uniform


def test_full_occupancy_sets_registers_and_shared_memory_aside():
    dev = get_device("h100")
    limited = occupancy(dev, 256, 128, 0).blocks_per_sm
    assert limited == 2
    assert fixed_blocks_per_sm(dev, 256, 128, limited) == 8  # 2,048 threads of 256
    assert fixed_blocks_per_sm(dev, 32, 16, 32) == 32  # the block slots still bind


@pytest.mark.toolchain
@pytest.mark.parametrize(("kernel", "tunables", "fix", "least"), [
    ("smem_bank_stride", {"stride": 32}, "bank-conflicts", 5.0),
    ("branch_divergence", {"pattern": 4}, "divergence", 3.0),
])
def test_each_fix_removes_its_own_limiter_only(kernel, tunables, fix, least):
    k = get_kernel(kernel)
    source, launch = k.instance(k.launch("medium", tunables), "cuda")
    base = predict_launch(source, launch, "h100")
    fixed = predict_launch(source, launch, "h100", fixes=frozenset({fix}))
    assert base.seconds / fixed.seconds > least
    assert fixed.based_on["fixes"] == [fix]
    others = set(FIXES) - {fix, "occupancy"}
    other = predict_launch(source, launch, "h100", fixes=frozenset(others))
    assert other.seconds == pytest.approx(base.seconds, rel=0.05)

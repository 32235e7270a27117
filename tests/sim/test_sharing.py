"""Wave sharing of the L2: which global accesses other blocks of the grid also make.

The traces come from small inline PTX kernels emulated on a few blocks, as the
predictor emulates block 0, its neighbours (probes) and a few others (checks).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from kerncast.emu import emulate
from kerncast.ptx import parse
from kerncast.sim._sharing import (
    INPUT_SETS, L2_USABLE, block_coords, probe_blocks, resident_shares, restored_warm,
    sector_offsets, warm_l2, wave_sharing,
)
from kerncast.trace import KINDS, SPACES

L2 = 50 * 1024 * 1024
HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"

# y[g] = x[g] + v[tid]: x and y private to each block, v read by every block.
PRIVATE_AND_COMMON = HEADER + """
.visible .entry k(.param .u64 x, .param .u64 v, .param .u64 y)
{
.reg .u32 %r<6>; .reg .u64 %rd<10>; .reg .f32 %f<4>;
ld.param.u64 %rd1, [x]; ld.param.u64 %rd2, [v]; ld.param.u64 %rd3, [y];
mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x;
mad.lo.u32 %r4, %r2, %r3, %r1;
mul.wide.u32 %rd4, %r4, 4; add.u64 %rd5, %rd1, %rd4;
ld.global.f32 %f1, [%rd5];
mul.wide.u32 %rd6, %r1, 4; add.u64 %rd7, %rd2, %rd6;
ld.global.f32 %f2, [%rd7];
add.f32 %f3, %f1, %f2;
add.u64 %rd8, %rd3, %rd4;
st.global.f32 [%rd8], %f3;
ret;
}
"""

# y[g] = x[ctaid^2 * ntid + tid]: the address is not affine in the block index.
SQUARED = HEADER + """
.visible .entry k(.param .u64 x, .param .u64 v, .param .u64 y)
{
.reg .u32 %r<7>; .reg .u64 %rd<10>; .reg .f32 %f<2>;
ld.param.u64 %rd1, [x]; ld.param.u64 %rd3, [y];
mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x;
mul.lo.u32 %r5, %r2, %r2;
mad.lo.u32 %r6, %r5, %r3, %r1;
mul.wide.u32 %rd4, %r6, 4; add.u64 %rd5, %rd1, %rd4;
ld.global.f32 %f1, [%rd5];
mad.lo.u32 %r4, %r2, %r3, %r1;
mul.wide.u32 %rd6, %r4, 4; add.u64 %rd8, %rd3, %rd6;
st.global.f32 [%rd8], %f1;
ret;
}
"""

# y[g] = x[ctaid.y * ntid.x + tid.x] on a 2-D grid: a row of blocks reads the same data.
ROW_SHARED = HEADER + """
.visible .entry k(.param .u64 x, .param .u64 v, .param .u64 y)
{
.reg .u32 %r<8>; .reg .u64 %rd<10>; .reg .f32 %f<2>;
ld.param.u64 %rd1, [x]; ld.param.u64 %rd3, [y];
mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.y; mov.u32 %r3, %ntid.x;
mad.lo.u32 %r4, %r2, %r3, %r1;
mul.wide.u32 %rd4, %r4, 4; add.u64 %rd5, %rd1, %rd4;
ld.global.f32 %f1, [%rd5];
mov.u32 %r5, %ctaid.x; mov.u32 %r6, %nctaid.x;
mad.lo.u32 %r7, %r2, %r6, %r5;
mad.lo.u32 %r7, %r7, %r3, %r1;
mul.wide.u32 %rd6, %r7, 4; add.u64 %rd8, %rd3, %rd6;
st.global.f32 [%rd8], %f1;
ret;
}
"""

THREADS = 128  # 4 warps, 512 bytes per block and access


def _trace(ptx: str, grid: tuple[int, ...], blocks: list[int]):
    total = int(np.prod(grid))
    x = np.zeros(total * total * THREADS + THREADS, np.float32)
    v = np.zeros(THREADS, np.float32)
    y = np.zeros(total * THREADS, np.float32)
    return emulate(parse(ptx), (grid, (THREADS,)), [x, v, y], blocks)


def _sharing(ptx, grid, checks=(2, 5), l2_bytes=L2, wave=None):
    probes = probe_blocks(grid)
    blocks = sorted({0, *probes, *checks})
    result = _trace(ptx, grid, blocks)
    total = int(np.prod(grid))
    return wave_sharing([result.trace], grid, probes, blocks, wave=wave or total,
                        total_blocks=total, l2_bytes=l2_bytes), result.trace


def _instances(trace, kind="load"):
    """The global instances of block 0's first warp, one per pc, in pc order."""
    acc = trace.memory
    keep = (acc.space == SPACES.index("global")) & (acc.kind == KINDS.index(kind)) & \
        (acc.warp == 0)
    return [(0, int(pc), 0) for pc in sorted(set(acc.pc[keep].tolist()))]


# -- grid geometry -----------------------------------------------------------------------

def test_block_coords_run_x_fastest():
    coords = block_coords(np.array([0, 1, 4, 5, 12, 23]), (4, 3, 2))
    assert coords.tolist() == [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1],
                               [3, 2, 1]]


@pytest.mark.parametrize("grid,probes", [((8,), [1]), ((4, 3, 2), [1, 4, 12]),
                                         ((1, 5), [1]), ((6, 1, 3), [1, 6]),
                                         ((1, 1, 1), [])])
def test_probes_are_block_zeros_neighbours_along_each_used_dimension(grid, probes):
    assert probe_blocks(grid) == probes


# -- wave_sharing ------------------------------------------------------------------------

def test_private_data_is_fetched_by_every_block_and_common_data_once():
    sharing, trace = _sharing(PRIVATE_AND_COMMON, (64,))
    x, v = _instances(trace)
    (y,) = _instances(trace, "store")
    assert sharing.fraction(x) == pytest.approx(1.0)
    assert sharing.fraction(y) == pytest.approx(1.0)
    assert sharing.fraction(v) == pytest.approx(1 / 64)
    assert sharing.affine == sharing.instances > 0
    assert sharing.scope == "grid"  # a few KiB: stays in the L2 for the whole grid


def test_shifts_move_private_sectors_by_the_block_stride():
    sharing, trace = _sharing(PRIVATE_AND_COMMON, (64,))
    x, v = _instances(trace)
    stride_sectors = THREADS * 4 // 32
    assert sharing.shift(x, 3, 0) == 3 * stride_sectors
    assert sharing.shift(x, 7, 2) == 5 * stride_sectors
    assert sharing.shift(v, 9, 0) == 0
    assert sharing.shift(x, 4, 4) == 0


def test_shared_data_evicted_between_its_users_is_fetched_again():
    """An L2 too small to keep one block's footprint makes every block refetch the
    common vector."""
    sharing, trace = _sharing(PRIVATE_AND_COMMON, (64,), l2_bytes=1024)
    _, v = _instances(trace)
    assert sharing.fraction(v) == pytest.approx(1.0)
    assert sharing.scope == "wave"


def test_an_address_not_affine_in_the_block_index_counts_as_private():
    sharing, trace = _sharing(SQUARED, (64,))
    (x,) = _instances(trace)
    (y,) = _instances(trace, "store")
    assert sharing.fraction(x) == 1.0
    assert sharing.affine == sharing.instances - 4  # the 4 warps' loads of x
    # private data of two blocks never overlaps
    assert sharing.shift(x, 2, 0) != sharing.shift(x, 3, 0)
    assert sharing.shift(x, 2, 0) != 2 * THREADS * 4 // 32
    assert sharing.shift(y, 2, 0) == 2 * THREADS * 4 // 32


def test_a_row_of_blocks_shares_what_it_reads():
    grid = (8, 4)
    sharing, trace = _sharing(ROW_SHARED, grid, checks=(9, 19))
    (x,) = _instances(trace)
    (y,) = _instances(trace, "store")
    assert sharing.fraction(x) == pytest.approx(1 / grid[0])
    assert sharing.fraction(y) == pytest.approx(1.0)
    assert sharing.shift(x, 8 + 5, 0) == THREADS * 4 // 32  # next row, any column
    assert sharing.shift(x, 5, 0) == 0


def test_a_run_of_blocks_anchored_past_block_zero_finds_the_same_sharing():
    """A run of the grid that starts at block 11 (row 1, column 3) stands on its own
    block: its neighbours one step on, its checks taken relative to it."""
    grid, anchor = (8, 4), 11
    probes = probe_blocks(grid, anchor)
    assert probes == [12, 19]
    checks = [anchor, *probes, 22, 29]
    trace = _trace(ROW_SHARED, grid, sorted(checks)).trace
    sharing = wave_sharing([trace], grid, probes, checks, wave=32, total_blocks=32,
                           l2_bytes=L2, anchor=anchor)
    acc = trace.memory
    first = (acc.warp == anchor * THREADS // 32) & (acc.space == SPACES.index("global"))
    x, y = [(0, int(pc), 0) for pc in sorted(set(acc.pc[first].tolist()))]
    assert sharing.fraction(x) == pytest.approx(1 / grid[0])
    assert sharing.fraction(y) == pytest.approx(1.0)
    assert sharing.shift(x, anchor + 8, anchor) == THREADS * 4 // 32  # the next row
    assert sharing.shift(x, anchor + 2, anchor) == 0


def test_unknown_instances_are_private():
    sharing, _ = _sharing(PRIVATE_AND_COMMON, (64,))
    assert sharing.fraction((3, 999, 0)) == 1.0


def test_a_trace_without_global_accesses_shares_nothing():
    empty = SimpleNamespace(memory=_trace(PRIVATE_AND_COMMON, (4,), [0]).trace.memory
                            .select(space="shared"), warps_per_block=4)
    sharing = wave_sharing([empty], (4,), [1], [0, 1], wave=4, total_blocks=4, l2_bytes=L2)
    assert sharing.instances == 0 and sharing.wave_footprint_bytes == 0.0
    # every request of such a trace is private: another block's shift is its own
    shifts = sharing.shifts_of(np.array([[0, 5, 0], [1, 7, 2]]), np.array([3, 0]),
                               np.array([0, 0]))
    assert shifts[1] == 0 and shifts[0] == sharing.shift((0, 5, 0), 3, 0) != 0


# -- resident_shares ---------------------------------------------------------------------

def _v_region(trace):
    acc = trace.memory
    pcs = sorted(set(acc.pc[(acc.space == SPACES.index("global")) &
                            (acc.kind == KINDS.index("load"))].tolist()))
    v_pc = pcs[1]
    base = int(acc.address[acc.pc == v_pc].min())
    return v_pc, SimpleNamespace(base=base, nbytes=THREADS * 4)


def test_a_small_buffer_read_by_the_whole_grid_comes_from_dram_once():
    trace = _trace(PRIVATE_AND_COMMON, (64,), [0]).trace
    v_pc, region = _v_region(trace)
    shares = resident_shares(trace.memory, [region], scale=64.0, l2_bytes=L2)
    sectors = region.nbytes / 32
    fetches = 64 * sectors  # every block fetches each sector of v once
    assert shares[v_pc] == pytest.approx(sectors * -np.expm1(-fetches / sectors) / fetches)
    assert shares[v_pc] == pytest.approx(1 / 64, rel=1e-3)


def test_a_pass_through_a_buffer_that_fits_the_l2_fetches_each_sector_once():
    trace = _trace(PRIVATE_AND_COMMON, (64,), [0, 9]).trace
    acc = trace.memory
    loads = sorted(set(acc.pc[(acc.space == SPACES.index("global")) &
                              (acc.kind == KINDS.index("load"))].tolist()))
    x_pc, v_pc = loads[0], loads[1]
    x = SimpleNamespace(base=int(acc.address[acc.pc == x_pc].min()), nbytes=64 * THREADS * 4)
    v = SimpleNamespace(base=int(acc.address[acc.pc == v_pc].min()), nbytes=THREADS * 4)
    shares = resident_shares(acc, [x, v], scale=32.0, l2_bytes=L2)
    # x: 64 blocks each read their own 512 bytes, every sector once: all from DRAM (a
    # random draw of as many sectors would find a third of them fetched already)
    assert shares[x_pc] == pytest.approx(1.0)
    # v: every block reads the same sectors again, from the L2
    assert shares[v_pc] == pytest.approx(1 / 64, rel=1e-3)


def test_a_buffer_larger_than_the_usable_l2_is_not_resident():
    trace = _trace(PRIVATE_AND_COMMON, (64,), [0]).trace
    v_pc, region = _v_region(trace)
    small_l2 = region.nbytes / L2_USABLE * 0.5
    assert v_pc not in resident_shares(trace.memory, [region], scale=64.0, l2_bytes=small_l2)
    assert resident_shares(trace.memory, [], scale=64.0, l2_bytes=L2) == {}


def test_a_launch_is_warm_where_every_copy_of_its_buffers_the_times_protocol_cycles_fits():
    l2 = 50 << 20
    most = L2_USABLE * l2 / INPUT_SETS  # the protocol cycles INPUT_SETS copies of these
    assert warm_l2(100 << 10, l2) and warm_l2(most, l2)
    assert not warm_l2(most * 1.01, l2)
    # larger buffers cycle fewer copies, but still twice the L2's size in all
    assert not warm_l2(20 << 20, l2) and not warm_l2(l2, l2) and not warm_l2(0, l2)


def test_buffers_copied_back_before_each_launch_are_warm_where_the_l2_keeps_them():
    l2 = 50 << 20
    keys = SimpleNamespace(name="keys", base=1 << 20, nbytes=16 << 20)
    table = SimpleNamespace(name="table", base=64 << 20, nbytes=1 << 20)
    warm = restored_warm([keys, table], {"keys"}, l2)
    assert warm.tolist() == [[(1 << 20) >> 5, (17 << 20) >> 5]]  # keys' sectors, not table's
    assert restored_warm([keys, table], set(), l2).shape == (0, 2)
    # the copy reads a pristine copy and writes the buffer, then the launch reads it all:
    # 16 + 17 MB fit in the usable 40 MB of 50, 24 + 25 do not
    big = SimpleNamespace(name="keys", base=1 << 20, nbytes=24 << 20)
    assert restored_warm([big, table], {"keys"}, l2).shape == (0, 2)


def test_the_copies_counted_are_those_the_times_protocol_cycles():
    from kerncast.measure._timing import TimingPolicy

    assert TimingPolicy().max_input_sets == INPUT_SETS


@pytest.mark.parametrize("grid, n", [((7,), 5), ((7,), 7), ((5, 3), 11), ((5, 3), 15),
                                     ((4, 3, 5), 29), ((4, 3, 5), 60), ((1, 9, 2), 13)])
def test_sector_offsets_are_the_coordinates_times_the_shift_row(grid, n):
    row = np.array([96, -4160, 1 << 20], np.int64)
    want = (block_coords(np.arange(n), grid) @ row) >> 5
    np.testing.assert_array_equal(sector_offsets(row, grid, n), want)

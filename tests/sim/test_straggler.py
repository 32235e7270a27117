"""The data-dependent loop bound, on hand-made traces."""

from __future__ import annotations

import numpy as np
import pytest

from kerncast.sim._straggler import loop_trip_bound
from kerncast.trace import KINDS, SPACES
from kerncast.trace._trace import MemoryAccesses

BASE = 0x1000
TPB = 32  # threads per block


class _Region:
    def __init__(self, name, base, words):
        self.name, self.base, self.words = name, base, np.asarray(words, np.int32)
        self.nbytes = self.words.nbytes

    def array(self):
        return self.words

    def unwritten(self):
        return None


class _Trace:
    def __init__(self, rows):
        cols = list(zip(*rows))  # (pc, lane, address)
        n = len(rows)
        self.memory = MemoryAccesses(
            event=np.arange(n), request=np.arange(n), pc=np.array(cols[0]),
            warp=np.array(cols[1]) // 32, lane=(np.array(cols[1]) % 32).astype(np.uint8),
            address=np.array(cols[2], np.uint64), width=np.full(n, 4),
            kind=np.full(n, KINDS.index("load"), np.int8),
            space=np.full(n, SPACES.index("global"), np.int8), step=np.zeros(n, np.int64))


def _csr_trace(offsets, lanes, stride=1, scale=1):
    """Lane i reads offsets[i] (pc 10) and offsets[i + 1] (pc 11), then loads once per
    iteration at pc 20: ceil(span / stride) * scale times."""
    rows = []
    for i in range(lanes):
        rows += [(10, i, BASE + 4 * i), (11, i, BASE + 4 * i + 4)]
        trips = int(np.ceil((offsets[i + 1] - offsets[i]) / stride)) * scale
        rows += [(20, i, 0x90000 + 4 * k) for k in range(trips)]
    return _Trace(rows)


def _offsets(lengths):
    return np.concatenate([[0], np.cumsum(lengths)])


@pytest.mark.parametrize("stride", [1, 4])
def test_the_longest_range_in_the_offsets_bounds_the_loop(stride):
    rng = np.random.default_rng(0)
    lengths = rng.integers(4, 40, 200)
    lengths[150] = 4000  # a hub no traced lane reads
    offsets = _offsets(lengths)
    bound = loop_trip_bound(_csr_trace(offsets, 24, stride), [_Region("row_ptr", BASE, offsets)],
                            TPB)
    assert bound is not None
    assert (bound.pc, bound.buffer, bound.stride) == (20, "row_ptr", stride)
    assert bound.trips == int(np.ceil(4000 / stride))
    assert bound.traced_trips == int(np.ceil(lengths[:24].max() / stride))


def test_no_bound_when_the_offsets_do_not_explain_the_trips():
    rng = np.random.default_rng(1)
    lengths = rng.integers(4, 40, 200)
    lengths[150] = 4000
    offsets = _offsets(lengths)
    trace = _csr_trace(offsets, 24, scale=3)  # three times the range: not this loop's bound
    assert loop_trip_bound(trace, [_Region("row_ptr", BASE, offsets)], TPB) is None


def test_even_ranges_give_the_traced_trips_and_no_rare_warp():
    offsets = _offsets(np.full(200, 10))
    bound = loop_trip_bound(_csr_trace(offsets, 24), [_Region("row_ptr", BASE, offsets)], TPB)
    assert bound.trips == bound.traced_trips == 10 and not bound.rare


def test_a_traced_warp_holding_a_range_few_blocks_reach_is_rare():
    rng = np.random.default_rng(2)
    lengths = rng.integers(4, 40, 5000)
    lengths[40] = 4000  # lane 40 (warp 1) walks the one hub among 5000 rows
    offsets = _offsets(lengths)
    bound = loop_trip_bound(_csr_trace(offsets, 64), [_Region("row_ptr", BASE, offsets)], TPB)
    assert bound.rare == {1} and bound.trips == bound.traced_trips == 4000
    # with blocks of 4096 threads one block in 1.2 holds such a row: not rare
    wide = loop_trip_bound(_csr_trace(offsets, 64), [_Region("row_ptr", BASE, offsets)], 4096)
    assert not wide.rare


def test_blocks_holding_a_rare_warp_take_another_blocks_stream():
    from kerncast.sim._predict import _common_sources

    # blocks of 2 warps; warp 5 (block 2) is rare
    assert _common_sources([0, 2, 4, 6], frozenset({5}), 2) == [0, 4, 4, 6]
    assert _common_sources([2, 2], frozenset({5}), 2) == [2, 2]  # nothing else to take
    assert _common_sources([0, 2], frozenset(), 2) == [0, 2]


def test_the_offsets_buffer_is_named_by_its_kernel_argument():
    from kerncast.corpus import get_kernel
    from kerncast.sim._predict import _argument

    kernel = get_kernel("spmv_csr_scalar")
    first = kernel.spec.args[0].name
    launch = kernel.instance(kernel.launch("small"))[1]
    assert _argument(launch, "spmv_csr_scalar_param_0") == first
    assert _argument(launch, "a_global_variable") == "a_global_variable"


def test_ranges_count_exactly_wherever_a_warp_can_be_rare():
    from kerncast.sim._straggler import _ranges_of, _top_needed

    rng = np.random.default_rng(3)
    offsets = _offsets(rng.integers(0, 500, 20_000)).astype(np.int32)
    spans = _ranges_of(offsets, 64, repeatable=False)
    diff = np.diff(offsets.astype(np.int64))
    assert spans.count == diff.size and spans.longest == diff.max()
    assert len(spans.top) == _top_needed(diff.size, 32) < diff.size  # kept for any block size
    for length in (0, 100, 450, 490, 499, 600):
        exact = int(np.count_nonzero(diff > length))
        got = spans.longer_than(length)
        if exact < len(spans.top):
            assert got == exact
        else:  # a lower bound that already makes every warp common
            assert got == len(spans.top) and got / spans.count * 64 >= 0.1


def test_ranges_are_kept_only_for_repeatable_unwritten_buffers():
    from kerncast.sim._straggler import _ranges_of

    offsets = _offsets(np.arange(1, 1001)).astype(np.int32)
    view = offsets.view()
    view.flags.writeable = False
    first = _ranges_of(view, 32, repeatable=True)
    assert _ranges_of(view, 32, repeatable=True) is first
    assert _ranges_of(view, 32, repeatable=False) is not first  # a caller's array
    assert _ranges_of(offsets, 32, repeatable=True) is not first  # the kernel may write it
    offsets[-1] += 5000  # what a caller's array may do between predictions
    assert _ranges_of(offsets, 32, repeatable=False).longest == 5000 + 1000

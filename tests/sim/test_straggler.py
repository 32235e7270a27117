"""The data-dependent loop bound, on hand-made traces."""

from __future__ import annotations

import numpy as np
import pytest

from kerncast.sim._straggler import loop_trip_bound
from kerncast.trace import KINDS, SPACES
from kerncast.trace._trace import MemoryAccesses

BASE = 0x1000


class _Region:
    def __init__(self, name, base, words):
        self.name, self.base, self.words = name, base, np.asarray(words, np.int32)
        self.nbytes = self.words.nbytes

    def array(self):
        return self.words


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
    bound = loop_trip_bound(_csr_trace(offsets, 24, stride), [_Region("row_ptr", BASE, offsets)])
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
    assert loop_trip_bound(trace, [_Region("row_ptr", BASE, offsets)]) is None


def test_no_bound_when_the_traced_lanes_hold_the_longest_range():
    offsets = _offsets(np.full(200, 10))
    assert loop_trip_bound(_csr_trace(offsets, 24), [_Region("row_ptr", BASE, offsets)]) is None

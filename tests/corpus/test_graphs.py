"""kerncast.corpus._graphs: the compiled traversals agree with the NumPy ones, and the
graphs have the degrees they are drawn with (their digests as measured:
test_measured_inputs.py)."""

import numpy as np
import pytest

from kerncast.core import _jit
from kerncast.corpus import get_kernel
from kerncast.corpus._data import module_of
from kerncast.corpus._graphs import _levels, _relax, power_law_csr


@pytest.fixture
def numpy_only(monkeypatch):
    """The generators' NumPy ways: no loop compiled."""
    monkeypatch.setattr(_jit, "_MADE", {_levels: None, _relax: None})


def _bfs_and_sssp(n, m, seed):
    bfs, sssp = module_of(get_kernel("bfs_frontier_expand")), module_of(get_kernel("sssp_relax"))
    row_ptr, cols = power_law_csr(n, m, np.random.default_rng(seed))
    weights = np.random.default_rng(seed + 1).integers(1, 64, size=m, dtype=np.int32)
    return bfs.bfs_state(row_ptr, cols, n), sssp.bellman_ford_state(row_ptr, cols, weights, n)


@pytest.mark.parametrize("n,m,seed", [(3000, 20000, 1), (50_000, 400_000, 2)])
def test_compiled_traversals_agree_with_numpy(n, m, seed, request):
    (level, frontier), (dist, active) = _bfs_and_sssp(n, m, seed)
    request.getfixturevalue("numpy_only")
    (level_np, frontier_np), (dist_np, active_np) = _bfs_and_sssp(n, m, seed)
    np.testing.assert_array_equal(level, level_np)
    np.testing.assert_array_equal(frontier, frontier_np)
    np.testing.assert_array_equal(dist, dist_np)
    np.testing.assert_array_equal(active, active_np)
    assert frontier.size > 1 and active.size > 1  # the traversals went somewhere


def test_power_law_degrees_sum_and_cap():
    n, m = 4096, 40_000
    row_ptr, cols = power_law_csr(n, m, np.random.default_rng(3))
    out_deg = np.diff(row_ptr.astype(np.int64))
    in_deg = np.bincount(cols, minlength=n)
    assert row_ptr[-1] == m and cols.size == m and cols.dtype == np.int32
    assert out_deg.max() <= max(8, n // 64) and in_deg.max() <= max(8, n // 64)
    assert out_deg[0] >= m // n  # the BFS source has an ordinary out-degree

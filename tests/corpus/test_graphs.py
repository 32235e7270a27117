"""kerncast.corpus._graphs: the graph kernels' inputs are those the datasets were
measured with, and the compiled traversals agree with the NumPy ones."""

import hashlib

import numpy as np
import pytest

from kerncast.core import _jit
from kerncast.corpus import get_kernel, make_args
from kerncast.corpus._data import module_of
from kerncast.corpus._graphs import _levels, _relax, power_law_csr

#: SHA-256 (first 16 hex digits) of inputs as the NumPy generators (rng.permutation, a
#: BFS and Bellman-Ford level by level) drew them when the datasets were measured
MEASURED = {
    "bfs_frontier_expand/small/frontier": "42883780e7b81817",
    "bfs_frontier_expand/small/level": "8ded21a415b4d911",
    "bfs_frontier_expand/medium/row_ptr": "aae551daf3c1a1be",
    "bfs_frontier_expand/medium/cols": "8b4da884752f49b0",
    "bfs_frontier_expand/medium/frontier": "3b67ac25bf23364b",
    "bfs_frontier_expand/medium/level": "78ca653a08804e10",
    "bfs_queue_expand/small/queue_in": "677e124e9d3b9103",
    "bfs_queue_expand/medium/queue_in": "98da1bbf17f463ae",
    "bfs_queue_expand/medium/level": "78ca653a08804e10",
    "sssp_relax/small/row_ptr": "296f4a4e96e676ac",
    "sssp_relax/small/cols": "f3af1f8ac922cf66",
    "sssp_relax/small/weights": "5f5f254008681e5a",
    "sssp_relax/small/active": "df30d148834b8c10",
    "sssp_relax/small/dist_in": "2c81bded6cd4ef9e",
    "sssp_relax/medium/weights": "0322c103db3c5df9",
    "sssp_relax/medium/active": "4057dd7e690a4193",
    "sssp_relax/medium/dist_in": "23469197e9801ddf",
}


def _digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


@pytest.mark.parametrize("name,size", sorted({tuple(k.split("/")[:2]) for k in MEASURED}))
def test_the_inputs_are_those_measured(name, size):
    kernel = get_kernel(name)
    args = make_args(kernel, kernel.launch(size), poison_outputs=False)
    for key, digest in MEASURED.items():
        if key.startswith(f"{name}/{size}/"):
            assert _digest(args[key.rsplit("/", 1)[1]]) == digest, key


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

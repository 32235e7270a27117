"""The power-law graphs of the corpus's graph kernels (BFS, SSSP), and their traversals.

:func:`power_law_csr` draws a directed configuration-model graph in CSR form: out- and
in-degrees drawn independently from capped power laws (exponent 2.3), the in-degree
stubs shuffled to give each out-edge its target.

The loops over every vertex or edge are compiled by Numba. The kernels' own modules are
loaded from their files under names of their own, which Numba's disk cache cannot find
again in another process, so the loops live here, in the package. :func:`bfs_levels` and
:func:`relaxed` return None or False where Numba or its JIT is off, and the generator then
takes its NumPy way, which gives the same values.
"""

from __future__ import annotations

import numpy as np

from kerncast.core import jitted, shuffle

__all__ = ["GAMMA", "UNSEEN", "bfs_levels", "capped_degrees", "power_law_csr", "relaxed"]

GAMMA = 2.3
#: the level of a vertex the BFS has not reached
UNSEEN = -1


def capped_degrees(n: int, m: int, cap: int, rng: np.random.Generator) -> np.ndarray:
    """Integer degrees summing to exactly m, power-law shaped, each at most cap."""
    w = (1.0 - rng.random(n)) ** (-1.0 / (GAMMA - 1.0))
    deg = w * (m / w.sum())
    free = np.empty(n, bool)
    for _ in range(8):  # cap the hubs and give what they lose to the others
        np.minimum(deg, cap, out=deg)
        np.less(deg, cap, out=free)
        lost = cap * (n - np.count_nonzero(free))
        np.multiply(deg, (m - lost) / deg[free].sum(), out=deg, where=free)
    np.floor(deg, out=deg)
    deg = np.minimum(deg, cap).astype(np.int64)
    room = np.flatnonzero(deg < cap)
    deg[rng.choice(room, size=m - int(deg.sum()), replace=False)] += 1
    return deg


def power_law_csr(n: int, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Row pointers and column indices (int32) of a power-law directed graph of ``n``
    vertices and ``m`` edges."""
    cap = max(8, min(16384, n // 64))
    out_deg = capped_degrees(n, m, cap, rng)
    if out_deg[0] < m // n:  # the source (vertex 0) gets an ordinary out-degree
        j = int(np.flatnonzero(out_deg >= m // n)[0])
        out_deg[[0, j]] = out_deg[[j, 0]]
    in_deg = capped_degrees(n, m, cap, rng)
    cols = np.repeat(np.arange(n, dtype=np.int32), in_deg)
    shuffle(rng, cols)  # rng.shuffle(cols), the same order, faster
    row_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(out_deg, out=row_ptr[1:])
    return row_ptr.astype(np.int32), cols


def bfs_levels(row_ptr: np.ndarray, cols: np.ndarray, level: np.ndarray) -> np.ndarray | None:
    """Every level of a BFS over the CSR graph (``row_ptr``, ``cols``) written into
    ``level``, which holds the sources' level 0 and :data:`UNSEEN` elsewhere; the number of
    vertices at each level, 0 last. None (``level`` untouched) where Numba is off."""
    compiled = jitted(_levels)
    return None if compiled is None else compiled(row_ptr, cols, level)


def _levels(row_ptr, cols, level):
    seen = level != UNSEEN  # a byte a vertex: the lookups stay in the caches longer
    frontier = np.flatnonzero(seen)
    sizes = [frontier.size]
    depth = 0
    while frontier.size:
        for v in frontier:
            for e in range(row_ptr[v], row_ptr[v + 1]):
                u = cols[e]
                if not seen[u]:
                    seen[u] = True
                    level[u] = depth + 1
        depth += 1
        frontier = np.flatnonzero(level == depth)
        sizes.append(frontier.size)
    return np.array(sizes)


def relaxed(row_ptr: np.ndarray, cols: np.ndarray, weights: np.ndarray, active: np.ndarray,
            dist_in: np.ndarray, dist: np.ndarray) -> bool:
    """One Bellman-Ford round: ``dist`` lowered in place to ``dist_in[v] + weight`` through
    every out-edge of the ``active`` vertices. False (``dist`` untouched) where Numba is
    off."""
    compiled = jitted(_relax)
    if compiled is None:
        return False
    compiled(row_ptr, cols, weights, active, dist_in, dist)
    return True


def _relax(row_ptr, cols, weights, active, dist_in, dist):
    for v in active:
        base = dist_in[v]
        for e in range(row_ptr[v], row_ptr[v + 1]):
            cand = base + weights[e]
            if cand < dist[cols[e]]:
                dist[cols[e]] = cand

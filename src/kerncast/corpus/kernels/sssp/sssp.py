"""Inputs and NumPy reference for the Bellman-Ford relaxation kernel.

The graph is a directed configuration-model graph in CSR form with power-law out-
and in-degrees (exponent 2.3, capped; :func:`kerncast.corpus._graphs.power_law_csr`)
and integer edge weights in [1, 63]. The state is that of a data-driven Bellman-Ford
from vertex 0, run here round by round until the number of active vertices peaks: the
kernel performs that round.
"""

import numpy as np

from kerncast.corpus._graphs import power_law_csr, relaxed

INF = 0x3FFFFFFF
MAX_WEIGHT = 63


def weighted_graph(n, m, rng):
    """Row pointers, column indices and weights (int32) of a power-law directed graph."""
    row_ptr, cols = power_law_csr(n, m, rng)
    weights = rng.integers(1, MAX_WEIGHT + 1, size=m, dtype=np.int32)
    return row_ptr, cols, weights


def relax(row_ptr, cols, weights, active, dist_in, dist):
    """One round: lower ``dist`` (in place) through the out-edges of ``active``."""
    if relaxed(row_ptr, cols, weights, active, dist_in, dist):
        return np.flatnonzero(dist < dist_in)
    starts = row_ptr[active].astype(np.int64)
    counts = row_ptr[active + 1].astype(np.int64) - starts
    edges = np.repeat(starts - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    edges += np.arange(edges.size, dtype=np.int64)
    cand = np.repeat(dist_in[active], counts) + weights[edges]
    np.minimum.at(dist, cols[edges], cand)
    return np.flatnonzero(dist < dist_in)


def bellman_ford_state(row_ptr, cols, weights, n):
    """Distances and active set at the round where the most vertices are active."""
    dist = np.full(n, INF, dtype=np.int32)
    dist[0] = 0
    active = np.array([0])
    while True:
        new = dist.copy()
        nxt = relax(row_ptr, cols, weights, active, dist, new)
        if nxt.size < active.size or nxt.size == 0:
            return dist, active
        dist, active = new, nxt


def inputs(kernel, params, rng):
    n, m = params["n"], params["m"]
    row_ptr, cols, weights = weighted_graph(n, m, rng)
    dist, active = bellman_ford_state(row_ptr, cols, weights, n)
    flags = np.zeros(n, dtype=np.uint8)
    flags[active] = 1
    return {"row_ptr": row_ptr, "cols": cols, "weights": weights, "active": flags,
            "dist_in": dist, "dist": dist.copy(), "next_active": np.zeros(n, dtype=np.uint8)}


def reference(kernel, args, params):
    dist_in = args["dist_in"]
    dist = args["dist"].copy()
    active = np.flatnonzero(args["active"])
    relax(args["row_ptr"], args["cols"], args["weights"], active, dist_in, dist)
    nxt = args["next_active"].copy()
    nxt[dist < dist_in] = 1
    return {"dist": dist, "next_active": nxt}

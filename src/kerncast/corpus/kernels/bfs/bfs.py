"""Inputs and NumPy reference for the BFS kernels.

The graph is a directed configuration-model graph in CSR form
(:func:`kerncast.corpus._graphs.power_law_csr`): out-degrees and in-degrees are drawn
independently from capped power laws (exponent 2.3), the in-degree stubs are shuffled
to give each out-edge its target. The traversal state comes from a level-synchronous
BFS from vertex 0 run here: the kernels expand the level with the most vertices, the
hardest launch of the traversal.
"""

import numpy as np

from kerncast.corpus._graphs import UNSEEN, bfs_levels, power_law_csr


def out_edges(row_ptr, vertices):
    """Edge positions of the out-edges of ``vertices``, grouped by vertex."""
    starts = row_ptr[vertices].astype(np.int64)
    counts = row_ptr[vertices + 1].astype(np.int64) - starts
    total = int(counts.sum())
    offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    return offsets + np.arange(total, dtype=np.int64)


def expand(row_ptr, cols, level, frontier):
    """One BFS level: the unvisited out-neighbours of ``frontier`` (sorted)."""
    seen = np.zeros(level.size, dtype=bool)
    seen[cols[out_edges(row_ptr, frontier)]] = True
    return np.flatnonzero(seen & (level == UNSEEN))


def bfs_state(row_ptr, cols, n):
    """Levels of a BFS from vertex 0 stopped at its widest level, and that level."""
    level = np.full(n, UNSEEN, dtype=np.int32)
    level[0] = 0
    sizes = bfs_levels(row_ptr, cols, level)
    if sizes is not None:
        widest = int(np.argmax(sizes))
        level[level > widest] = UNSEEN
        return level, np.flatnonzero(level == widest)
    layers = [np.array([0])]
    while layers[-1].size:
        new = expand(row_ptr, cols, level, layers[-1])
        level[new] = len(layers)
        layers.append(new)
    widest = int(np.argmax([layer.size for layer in layers]))
    level[level > widest] = UNSEEN
    return level, layers[widest]


def inputs(kernel, params, rng):
    n, m = params["n"], params["m"]
    row_ptr, cols = power_law_csr(n, m, rng)
    level, frontier = bfs_state(row_ptr, cols, n)
    data = {"row_ptr": row_ptr, "cols": cols, "level": level}
    if kernel == "bfs_frontier_expand":
        flags = np.zeros(n, dtype=np.uint8)
        flags[frontier] = 1
        data["frontier"] = flags
        data["next_frontier"] = np.zeros(n, dtype=np.uint8)
    else:
        qlen = params["qlen"]
        if frontier.size < qlen:
            raise ValueError(f"the widest BFS level has {frontier.size} vertices, fewer than "
                             f"qlen={qlen}; lower qlen")
        # A chunk of the level, in the arbitrary order an atomic queue produces.
        data["queue_in"] = rng.permutation(frontier)[:qlen].astype(np.int32)
        data["queue_count"] = np.zeros(1, dtype=np.int32)
    return data


def reference(kernel, args, params):
    row_ptr, cols, level = args["row_ptr"], args["cols"], args["level"].copy()
    if kernel == "bfs_frontier_expand":
        frontier = np.flatnonzero(args["frontier"])
    else:
        frontier = args["queue_in"].astype(np.int64)
    new = expand(row_ptr, cols, level, frontier)
    level[new] = level[frontier[0]] + 1
    if kernel == "bfs_frontier_expand":
        nxt = args["next_frontier"].copy()
        nxt[new] = 1
        return {"level": level, "next_frontier": nxt}
    count = args["queue_count"] + np.int32(new.size)
    return {"level": level, "queue_count": count}

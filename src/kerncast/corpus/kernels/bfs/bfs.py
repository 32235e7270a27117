"""Inputs and NumPy reference for the BFS kernels.

The graph is a directed configuration-model graph in CSR form: out-degrees and
in-degrees are drawn independently from capped power laws (exponent 2.3), the
in-degree stubs are shuffled to give each out-edge its target. The traversal state
comes from a level-synchronous BFS from vertex 0 run here: the kernels expand the
level with the most vertices, the hardest launch of the traversal.
"""

import numpy as np

GAMMA = 2.3
UNSEEN = -1


def _capped_degrees(n, m, cap, rng):
    """Integer degrees summing to exactly m, power-law shaped, each at most cap."""
    w = (1.0 - rng.random(n)) ** (-1.0 / (GAMMA - 1.0))
    deg = w * (m / w.sum())
    for _ in range(8):  # cap the hubs and give what they lose to the others
        deg = np.minimum(deg, cap)
        free = deg < cap
        deg[free] *= (m - cap * np.count_nonzero(~free)) / deg[free].sum()
    deg = np.minimum(np.floor(deg), cap).astype(np.int64)
    short = m - int(deg.sum())
    room = np.flatnonzero(deg < cap)
    deg[rng.choice(room, size=short, replace=False)] += 1
    return deg


def csr_graph(n, m, rng):
    """Row pointers and column indices (int32) of a power-law directed graph."""
    cap = max(8, min(16384, n // 64))
    out_deg = _capped_degrees(n, m, cap, rng)
    if out_deg[0] < m // n:  # the BFS source gets an ordinary out-degree
        j = int(np.flatnonzero(out_deg >= m // n)[0])
        out_deg[[0, j]] = out_deg[[j, 0]]
    in_deg = _capped_degrees(n, m, cap, rng)
    cols = rng.permutation(np.repeat(np.arange(n, dtype=np.int32), in_deg))
    row_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(out_deg, out=row_ptr[1:])
    return row_ptr.astype(np.int32), cols.astype(np.int32)


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
    row_ptr, cols = csr_graph(n, m, rng)
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

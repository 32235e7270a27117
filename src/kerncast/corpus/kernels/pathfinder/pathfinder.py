"""Inputs and NumPy reference for the pathfinder kernel.

Pathfinder finds the cheapest top-to-bottom path through a grid of step costs (0..9)
moving straight or diagonally down: cost[r][c] = wall[r][c] + min(cost[r-1][c-1..c+1]).
One launch advances the cost row by ``pyr`` rows; ``wall`` holds those rows and
``src`` the cost row before them (computed here from a few earlier rows of the grid).
"""

import numpy as np

CHUNK = 1 << 20   # columns per step of the generation and reference (cache-sized)
BIG = 0x3FFFFFFF  # cost of the virtual columns beyond the edges
WARMUP_ROWS = 8


def _step_costs(count, rng, out=None):
    """Costs 0..9 from random bytes b as (10 b) >> 8 (into ``out`` when given)."""
    raw = rng.bit_generator.random_raw((count + 7) // 8).view(np.uint8)[:count]
    out = np.empty(count, dtype=np.int32) if out is None else out
    np.copyto(out, raw)
    out *= 10
    out >>= 8
    return out


def advance(cost, rows):
    """Apply the recurrence for each row of ``rows`` (rows x width) to ``cost``."""
    for wall_row in rows:
        left = np.concatenate(([BIG], cost[:-1]))
        right = np.concatenate((cost[1:], [BIG]))
        cost = np.minimum(np.minimum(left, right), cost) + wall_row
    return cost


def inputs(kernel, params, rng):
    cols, pyr = params["cols"], params["pyr"]
    src = _step_costs(cols, rng)
    for lo in range(0, cols, CHUNK):  # a few earlier rows (edges between chunks ignored)
        part = src[lo:lo + CHUNK]
        src[lo:lo + CHUNK] = advance(part, _step_costs(WARMUP_ROWS * part.size, rng)
                                     .reshape(WARMUP_ROWS, part.size))
    wall = np.empty(pyr * cols, dtype=np.int32)
    for lo in range(0, wall.size, CHUNK):
        _step_costs(min(CHUNK, wall.size - lo), rng, out=wall[lo:lo + CHUNK])
    return {"wall": wall, "src": src}


def reference(kernel, args, params):
    cols, pyr = params["cols"], params["pyr"]
    wall = args["wall"].reshape(pyr, cols)
    src = args["src"]
    dst = np.empty(cols, dtype=np.int32)
    for lo in range(0, cols, CHUNK):  # each chunk with a halo of pyr columns per side
        hi = min(cols, lo + CHUNK)
        a, b = max(0, lo - pyr), min(cols, hi + pyr)
        part = advance(src[a:b], wall[:, a:b])
        dst[lo:hi] = part[lo - a:hi - a]
    return {"dst": dst}

"""Inputs and NumPy reference for the blocked Needleman-Wunsch kernel.

A batch of ``batch`` protein pairs (length n, residues 0..19 of a 24-letter
alphabet) is aligned globally with a substitution table and a linear gap penalty:

    H[i][j] = max(H[i-1][j-1] + S[a_i][b_j], H[i-1][j] - gap, H[i][j-1] - gap)
    H[i][0] = -gap * i,  H[0][j] = -gap * j

in T x T tiles swept by tile anti-diagonals; the launch computes the main tile
anti-diagonal (ti + tj = nt - 1, nt = n / T), one tile per group of T threads. The
state is kept in linear space, as score-only aligners do: for every tile column tj
the row of H above the next tile (hb, T + 1 values, the first one the corner) and
for every tile row ti the column left of it (vb, likewise). The kernel reads the
boundaries of its tile and replaces them with the tile's bottom row and right column.

The boundaries before the launch are exact: the full matrix is computed here for
min(batch, 16) distinct pairs (related sequences: 30% substitutions, short indels),
and the batch repeats them (a tile's work does not depend on the values).
"""

import numpy as np

ALPHABET = 24
RESIDUES = 20
UNIQUE = 16


def substitution_table():
    """A symmetric BLOSUM-like 24 x 24 table (int32), the same for every seed."""
    rng = np.random.default_rng(62)
    table = rng.integers(-4, 4, size=(ALPHABET, ALPHABET))
    table = np.triu(table) + np.triu(table, 1).T
    np.fill_diagonal(table, rng.integers(4, 12, size=ALPHABET))
    table[:, RESIDUES:] = table[RESIDUES:, :] = -1
    table[ALPHABET - 1, :] = table[:, ALPHABET - 1] = -4
    table[ALPHABET - 1, ALPHABET - 1] = 1
    return table.astype(np.int32)


def _related_pair(n, rng):
    a = rng.integers(0, RESIDUES, size=n)
    b = a.copy()
    swap = rng.random(n) < 0.3
    b[swap] = rng.integers(0, RESIDUES, size=int(swap.sum()))
    for _ in range(max(1, n // 64)):  # short insertions and deletions, length kept
        pos, size = int(rng.integers(0, n)), int(rng.integers(1, 6))
        if rng.random() < 0.5:
            b = np.concatenate([b[:pos], rng.integers(0, RESIDUES, size), b[pos:]])[:n]
        else:
            b = np.concatenate([b[:pos], b[pos + size:], rng.integers(0, RESIDUES, size)])[:n]
    return a.astype(np.int8), b.astype(np.int8)


def dp_rows(prev, left, a_row, b, table, gap):
    """One DP row per pair: prev (m, w+1) the row above, left (m,) its new first value."""
    w = b.shape[1]
    x = np.empty_like(prev)
    x[:, 0] = left
    x[:, 1:] = np.maximum(prev[:, :-1] + table[a_row[:, None], b], prev[:, 1:] - gap)
    ramp = gap * np.arange(w + 1, dtype=prev.dtype)
    return np.maximum.accumulate(x + ramp, axis=1) - ramp


def full_boundaries(a, b, table, gap, every):
    """Rows and columns of H at multiples of ``every`` (plus row/column 0) for each pair."""
    m, n = a.shape
    row = np.broadcast_to(-gap * np.arange(n + 1, dtype=np.int32), (m, n + 1)).copy()
    rows = [row]
    cols = np.empty((m, n + 1, n // every + 1), dtype=np.int32)
    cols[:, 0, :] = row[:, ::every]
    for i in range(1, n + 1):
        row = dp_rows(row, np.full(m, -gap * i, dtype=np.int32), a[:, i - 1], b, table, gap)
        cols[:, i, :] = row[:, ::every]
        if i % every == 0:
            rows.append(row)
    return np.stack(rows, axis=1), cols  # (m, n/every + 1, n + 1), (m, n + 1, n/every + 1)


def inputs(kernel, params, rng):
    n, batch, tile, gap = params["n"], params["batch"], params["tile"], params["gap"]
    nt = n // tile
    uniq = min(batch, UNIQUE)
    pairs = [_related_pair(n, rng) for _ in range(uniq)]
    a = np.stack([p[0] for p in pairs])
    b = np.stack([p[1] for p in pairs])
    table = substitution_table()
    rows, cols = full_boundaries(a.astype(np.intp), b.astype(np.intp), table, gap, tile)
    ti = np.arange(nt)
    tj = nt - 1 - ti
    span = np.arange(tile + 1)
    # Tile (ti, tj) reads row ti*T, columns tj*T .. tj*T+T, and column tj*T, rows ti*T ..
    hb = np.empty((uniq, nt, tile + 1), dtype=np.int32)
    vb = np.empty((uniq, nt, tile + 1), dtype=np.int32)
    hb[:, tj, :] = rows[:, ti[:, None], tj[:, None] * tile + span]
    vb[:, ti, :] = cols[:, ti[:, None] * tile + span, tj[:, None]]
    reps = np.arange(batch) % uniq
    return {"seq_a": a[reps].reshape(-1), "seq_b": b[reps].reshape(-1),
            "subst": table.reshape(-1), "hb": hb[reps].reshape(-1), "vb": vb[reps].reshape(-1)}


def tile_sweep(top, left, a_seg, b_seg, table, gap):
    """Bottom rows and right columns of tiles given their top rows and left columns."""
    tile = a_seg.shape[1]
    row = top.copy()
    right = np.empty((top.shape[0], tile), dtype=np.int32)
    for r in range(tile):
        row = dp_rows(row, left[:, r + 1], a_seg[:, r], b_seg, table, gap)
        right[:, r] = row[:, tile]
    return row, right


def reference(kernel, args, params):
    n, batch, tile, gap = params["n"], params["batch"], params["tile"], params["gap"]
    nt = n // tile
    table = args["subst"].reshape(ALPHABET, ALPHABET)
    a = args["seq_a"].reshape(batch, nt, tile).astype(np.intp)
    b = args["seq_b"].reshape(batch, nt, tile).astype(np.intp)
    hb = args["hb"].reshape(batch * nt, tile + 1).copy()
    vb = args["vb"].reshape(batch * nt, tile + 1).copy()
    pair = np.repeat(np.arange(batch), nt)
    ti = np.tile(np.arange(nt), batch)
    tj = nt - 1 - ti
    hrow, vrow = pair * nt + tj, pair * nt + ti  # the tile's slots in hb and vb
    step = max(1, (1 << 16) // tile)
    for lo in range(0, pair.size, step):
        sl = slice(lo, lo + step)
        top, left = hb[hrow[sl]], vb[vrow[sl]]
        bottom, right = tile_sweep(top, left, a[pair[sl], ti[sl]], b[pair[sl], tj[sl]], table, gap)
        bottom[:, 0] = left[:, tile]
        hb[hrow[sl]] = bottom
        vb[vrow[sl], 0] = top[:, tile]
        vb[vrow[sl], 1:] = right
    return {"hb": hb.reshape(-1), "vb": vb.reshape(-1)}

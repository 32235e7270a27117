"""Inputs and NumPy reference for the sparse matrix-vector kernels (y = A x).

CSR matrices have log-normal row lengths (sigma 1, so a heavy tail of long rows,
capped) summing to exactly nnz, as in matrices from circuits, graphs and economics.
ELLPACK matrices have row lengths uniform in [width * 3/5, width], as in
finite-element meshes, padded to the width with column -1. In both, three of four
entries lie in a band around the diagonal and the rest anywhere in the row.
"""

import numpy as np

CHUNK = 1 << 20  # entries per step of the generation and reference (cache-sized)


def _row_lengths(rows, nnz, rng):
    cap = max(8, min(4096, rows // 2))
    raw = rng.lognormal(0.0, 1.0, rows)
    lens = raw * (nnz / raw.sum())
    for _ in range(8):
        lens = np.clip(lens, 1, cap)
        scale = (nnz - lens.sum()) / lens.sum()
        lens *= 1 + scale
    lens = np.clip(np.floor(lens), 1, cap).astype(np.int64)
    short = nnz - int(lens.sum())
    room = np.flatnonzero(lens < cap)
    lens[rng.choice(room, size=short, replace=False)] += 1
    return lens


def _entries(row_of, ncols, rng):
    """Column indices and values for entries of the given rows, one 64-bit draw each.

    The low half of the draw places the entry: with probability 1/4 anywhere in the
    row, otherwise within a band of +-``band`` columns around the diagonal (wrapping
    around); the high half gives a value uniform in [-1, 1).
    """
    band = 1 << int(np.log2(max(4, min(4096, ncols // 16))))
    raw = rng.bit_generator.random_raw(row_of.size).view(np.uint32)
    place, bits = raw[0::2], raw[1::2]
    cols = row_of + ((place >> 2) & np.uint32(2 * band - 1)).astype(np.int32) - np.int32(band)
    cols[cols < 0] += ncols
    cols[cols >= ncols] -= ncols
    far = (place & 3) == 0
    cols[far] = (((place[far] >> 2).astype(np.uint64) * ncols) >> 30).astype(np.int32)
    vals = ((bits >> 9) | np.uint32(0x40000000)).view(np.float32) - np.float32(3.0)
    return cols, vals


def csr_matrix(rows, nnz, rng):
    lens = _row_lengths(rows, nnz, rng)
    row_ptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(lens, out=row_ptr[1:])
    cols = np.empty(nnz, dtype=np.int32)
    vals = np.empty(nnz, dtype=np.float32)
    step = max(1, CHUNK // int(lens.mean()))
    for lo in range(0, rows, step):
        hi = min(rows, lo + step)
        row_of = np.repeat(np.arange(lo, hi, dtype=np.int32), lens[lo:hi])
        a, b = row_ptr[lo], row_ptr[hi]
        cols[a:b], vals[a:b] = _entries(row_of, rows, rng)
    return row_ptr.astype(np.int32), cols, vals


def ell_matrix(rows, width, rng):
    lens = rng.integers(width * 3 // 5, width + 1, size=rows)
    cols = np.empty((width, rows), dtype=np.int32)
    vals = np.empty((width, rows), dtype=np.float32)
    row_of = np.arange(rows, dtype=np.int32)
    for k in range(width):
        cols[k], vals[k] = _entries(row_of, rows, rng)
        pad = lens <= k
        cols[k][pad] = -1
        vals[k][pad] = 0.0
    return cols.reshape(-1), vals.reshape(-1)


def inputs(kernel, params, rng):
    rows = params["rows"]
    if kernel == "spmv_ell":
        cols, vals = ell_matrix(rows, params["width"], rng)
        data = {"cols": cols, "vals": vals}
    else:
        row_ptr, cols, vals = csr_matrix(rows, params["nnz"], rng)
        data = {"row_ptr": row_ptr, "cols": cols, "vals": vals}
    data["x"] = rng.random(rows, dtype=np.float32) * 2 - 1
    return data


def _csr_product(row_ptr, cols, vals, x):
    rows = row_ptr.size - 1
    y = np.zeros(rows, dtype=np.float64)
    step = CHUNK // 64
    for lo in range(0, rows, step):
        hi = min(rows, lo + step)
        a, b = int(row_ptr[lo]), int(row_ptr[hi])
        prod = vals[a:b].astype(np.float64) * x[cols[a:b]]
        lens = np.diff(row_ptr[lo:hi + 1])
        sums = np.add.reduceat(prod, (row_ptr[lo:hi] - a)[lens > 0]) if b > a else []
        y[lo:hi][lens > 0] = sums
    return y


def _ell_product(cols, vals, x, rows):
    width = cols.size // rows
    y = np.zeros(rows, dtype=np.float64)
    for k in range(width):
        c = cols[k * rows:(k + 1) * rows]
        v = vals[k * rows:(k + 1) * rows].astype(np.float64)
        y += np.where(c >= 0, v * x[np.maximum(c, 0)], 0.0)
    return y


def reference(kernel, args, params):
    x = args["x"].astype(np.float64)
    if kernel == "spmv_ell":
        y = _ell_product(args["cols"], args["vals"], x, params["rows"])
    else:
        y = _csr_product(args["row_ptr"], args["cols"], args["vals"], x)
    return {"y": y.astype(np.float32)}

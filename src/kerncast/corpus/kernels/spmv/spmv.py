"""Inputs and NumPy reference for the sparse matrix-vector kernels (y = A x).

CSR matrices have log-normal row lengths (sigma 1, so a heavy tail of long rows,
capped) summing to exactly nnz, as in matrices from circuits, graphs and economics.
ELLPACK matrices have row lengths uniform in [width * 3/5, width], as in
finite-element meshes, padded to the width with column -1. In both, three of four
entries lie in a band around the diagonal and the rest anywhere in the row.
"""

import numpy as np

from kerncast.core import advanced, chunked_together

CHUNK = 1 << 20  # entries per step of the reference (cache-sized)
PIECE = 1 << 14  # entries made at once (64 KiB of each array, a chunk of the emulator's memory)


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


def _entry_arrays(count, make):
    """Column indices and values of ``count`` entries as chunked arrays, ``make(lo, hi)``
    giving entries ``lo`` up to ``hi``."""
    return chunked_together({"cols": (np.int32, count, PIECE), "vals": (np.float32, count, PIECE)},
                            lambda k: dict(zip(("cols", "vals"),
                                               make(k * PIECE, min(count, (k + 1) * PIECE)))))


def csr_matrix(rows, nnz, rng):
    """Row pointers and the chunked column indices and values of a CSR matrix, and the
    generator as the whole matrix leaves it. Entry ``e`` takes the ``e``-th draw after the
    row lengths', row by row."""
    lens = _row_lengths(rows, nnz, rng)
    row_ptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(lens, out=row_ptr[1:])
    start = advanced(rng, 0)

    def entries(lo, hi):
        first, last = np.searchsorted(row_ptr, [lo, hi - 1], side="right") - 1
        row_of = np.repeat(np.arange(first, last + 1, dtype=np.int32), lens[first:last + 1])
        skip = lo - row_ptr[first]
        return _entries(row_of[skip:skip + hi - lo], rows, advanced(start, lo))

    return row_ptr.astype(np.int32), _entry_arrays(nnz, entries), advanced(start, nnz)


def ell_matrix(rows, width, rng):
    """The chunked column indices and values of an ELLPACK matrix (column-major: slot k of
    every row, then slot k + 1), and the generator as the whole matrix leaves it. Element
    ``e`` takes the ``e``-th draw after the row lengths'."""
    lens = rng.integers(width * 3 // 5, width + 1, size=rows)
    start = advanced(rng, 0)

    def entries(lo, hi):
        slot, row = np.divmod(np.arange(lo, hi, dtype=np.int64), rows)
        cols, vals = _entries(row.astype(np.int32), rows, advanced(start, lo))
        pad = lens[row] <= slot
        cols[pad], vals[pad] = -1, 0.0
        return cols, vals

    return _entry_arrays(width * rows, entries), advanced(start, width * rows)


def inputs(kernel, params, rng):
    rows = params["rows"]
    if kernel == "spmv_ell":
        data, rng = ell_matrix(rows, params["width"], rng)
    else:
        row_ptr, data, rng = csr_matrix(rows, params["nnz"], rng)
        data["row_ptr"] = row_ptr
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

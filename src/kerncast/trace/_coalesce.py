"""Coalescing: the 32-byte sectors and 128-byte lines each warp-level request touches.

A request is one memory instruction executed by one warp (Nsight Compute's
``l1tex__t_requests``); its sectors are the distinct 32-byte blocks its active
lanes access (``l1tex__t_sectors``). Aligned accesses of up to 32 bytes never
straddle a sector, so each lane's access lies in one sector and one line.

Local memory is interleaved by the hardware: 4-byte word ``k`` of a thread's local
area sits next to the same word of the other 31 threads of its warp, so a warp
reading the same local offset touches 128 contiguous bytes. Local accesses are
mapped to ``((warp * words + k) * 32 + lane) * 4`` before counting (``words`` is
the largest word offset seen, plus one), one entry per 4-byte word covered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kerncast.trace._trace import KINDS, SPACES, MemoryAccesses

__all__ = ["Requests", "requests", "sector_addresses", "ramp", "group_rows",
           "distinct_per_row", "SECTOR", "LINE"]

SECTOR = 32
LINE = 128


@dataclass(frozen=True)
class Requests:
    """One row per warp-level request, in execution order."""

    event: np.ndarray
    pc: np.ndarray
    warp: np.ndarray
    space: np.ndarray
    kind: np.ndarray
    lanes: np.ndarray
    bytes: np.ndarray
    sectors: np.ndarray
    lines: np.ndarray

    def __len__(self) -> int:
        return len(self.event)

    def select(self, space: str | None = None, kind: str | None = None) -> Requests:
        keep = np.ones(len(self.event), bool)
        if space is not None:
            keep &= self.space == SPACES.index(space)
        if kind is not None:
            keep &= self.kind == KINDS.index(kind)
        return Requests(*(getattr(self, f)[keep] for f in self.__dataclass_fields__))

    def total(self, field: str) -> int:
        return int(getattr(self, field).sum())


def ramp(counts: np.ndarray) -> np.ndarray:
    """``concatenate([arange(n) for n in counts])``, vectorised."""
    counts = np.asarray(counts, np.int64)
    total = int(counts.sum())
    starts = np.cumsum(counts) - counts
    return np.arange(total, dtype=np.int64) - np.repeat(starts, counts)


def sector_addresses(acc: MemoryAccesses) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, byte addresses)``: the addresses whose sectors/lines count, one per covered
    sector-sized piece (local accesses remapped as the hardware interleaves them)."""
    rows = np.arange(len(acc.event))
    address = acc.address.astype(np.uint64)
    local = acc.space == SPACES.index("local")
    if not local.any():
        return rows, address
    words_per_lane = np.maximum(acc.width[local] // 4, 1)
    words = int((acc.address[local].astype(np.int64) // 4 + words_per_lane).max())
    rep = np.repeat(np.flatnonzero(local), words_per_lane)
    offset = ramp(words_per_lane)
    word = acc.address[rep].astype(np.int64) // 4 + offset
    mapped = ((acc.warp[rep].astype(np.int64) * words + word) * 32 + acc.lane[rep]) * 4
    keep = ~local
    rows = np.concatenate([rows[keep], rep])
    address = np.concatenate([address[keep], mapped.astype(np.uint64)])
    order = np.argsort(rows, kind="stable")
    return rows[order], address[order]


def group_rows(group: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values of contiguous runs of ``group`` (non-decreasing ids) as the rows of a matrix
    padded with -1 (values must be >= 0); also returns each row's group id."""
    n = len(group)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]]) if n else np.zeros(0, int)
    sizes = np.diff(np.r_[starts, n])
    matrix = np.full((len(starts), int(sizes.max()) if n else 0), -1, np.int64)
    matrix[np.repeat(np.arange(len(starts)), sizes), ramp(sizes)] = values
    return matrix, group[starts]


def distinct_per_row(matrix: np.ndarray) -> np.ndarray:
    """Distinct values (other than the -1 padding) in every row."""
    if matrix.size == 0:
        return np.zeros(len(matrix), np.int64)
    ordered = np.sort(matrix, axis=1)
    fresh = np.ones(ordered.shape, bool)
    fresh[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    return (fresh & (ordered >= 0)).sum(axis=1)


def _distinct_per_request(request: np.ndarray, key: np.ndarray, count: int) -> np.ndarray:
    """Distinct keys per request; ``request`` runs are contiguous (rows are in event and
    lane order)."""
    out = np.zeros(count, np.int64)
    if len(request) == 0:
        return out
    matrix, ids = group_rows(request, key.astype(np.int64))
    np.add.at(out, ids, distinct_per_row(matrix))
    return out


def requests(acc: MemoryAccesses) -> Requests:
    """Per-request sector and line counts of every memory access of a trace.

    Shared, const and param requests get sector and line counts of their
    addresses too (useful for const broadcasts); the shared-memory cost model is
    the bank analysis (:func:`kerncast.trace.bank_conflicts`).
    """
    ids, renumbered = np.unique(acc.request, return_inverse=True)
    renumbered = renumbered.reshape(-1)
    count = len(ids)
    first = np.full(count, len(acc.request), np.int64)
    np.minimum.at(first, renumbered, np.arange(len(acc.request)))
    rows, address = sector_addresses(acc)
    req = renumbered[rows]
    sectors = _distinct_per_request(req, address // np.uint64(SECTOR), count)
    lines = _distinct_per_request(req, address // np.uint64(LINE), count)
    lanes = np.bincount(renumbered, minlength=count)
    nbytes = np.bincount(renumbered, weights=acc.width, minlength=count).astype(np.int64)
    pick = first
    return Requests(acc.event[pick], acc.pc[pick], acc.warp[pick], acc.space[pick],
                    acc.kind[pick], lanes, nbytes, sectors, lines)

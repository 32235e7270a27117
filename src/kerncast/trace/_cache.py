"""Cache models over a trace's sector stream: reuse distances and set-associative LRU.

The *stream* is the sequence of (coalesced) sectors that warp-level requests send
to a cache, in the order the emulator executed them. Both models are vectorised:

* :func:`reuse_distances` gives, for every access, the number of distinct keys
  (lines or sectors) used since the previous access to the same key (-1 for a
  first use), in O(n log² n) with sorted levels of a merge tree and
  ``searchsorted``; a fully associative LRU cache of ``c`` entries hits exactly the
  accesses whose distance is below ``c``;
* :func:`simulate_cache` models a sectored, set-associative LRU cache (lines of
  ``line`` bytes split into sectors, ``ways`` lines per set): a line access hits
  when its reuse distance *within its set* is below ``ways``; a sector hits when
  its line is resident and the sector was filled since the line was last
  allocated (no miss of the line in between).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kerncast.trace._coalesce import SECTOR, sector_addresses
from kerncast.trace._trace import KINDS, MemoryAccesses

__all__ = ["CacheResult", "reuse_distances", "sector_stream", "simulate_cache", "lru_hit_rate"]


def _previous(keys: np.ndarray) -> np.ndarray:
    """Index of the previous access with the same key (-1 if none)."""
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    prev = np.full(len(keys), -1, np.int64)
    same = np.r_[False, sk[1:] == sk[:-1]]
    prev[order[same]] = order[np.flatnonzero(same) - 1]
    return prev


def _count_after(values: np.ndarray, prefix: np.ndarray, above: np.ndarray) -> np.ndarray:
    """For each query k: #{j < prefix[k] : values[j] > above[k]} (merge-tree levels)."""
    n = len(values)
    size = 1 << max(1, int(np.ceil(np.log2(max(n, 1)))) + 1)
    padded = np.full(size, -1, np.int64)
    padded[:n] = values
    big = np.int64(max(n, 1) + 2)
    out = np.zeros(len(prefix), np.int64)
    level, block = 0, 1
    while block <= size:
        has = ((prefix >> level) & 1).astype(bool)
        if has.any():
            rows = padded.reshape(-1, block)
            ordered = np.sort(rows, axis=1)
            node = (prefix[has] >> (level + 1)) << 1
            flat = (ordered + np.arange(len(rows))[:, None] * big).ravel()
            pos = np.searchsorted(flat, node * big + above[has], side="right") - node * block
            out[has] += block - pos
        level += 1
        block <<= 1
    return out


def reuse_distances(keys: np.ndarray) -> np.ndarray:
    """Distinct other keys seen between consecutive uses of each key (-1: first use)."""
    keys = np.asarray(keys)
    n = len(keys)
    if n == 0:
        return np.zeros(0, np.int64)
    prev = _previous(keys)
    nxt = np.full(n, n, np.int64)
    has = prev >= 0
    nxt[prev[has]] = np.flatnonzero(has)
    index = np.arange(n, dtype=np.int64)
    q = np.flatnonzero(has)
    dist = np.full(n, -1, np.int64)
    if len(q):
        upto = _count_after(nxt, index[q], index[q])
        before = _count_after(nxt, prev[q] + 1, index[q])
        dist[q] = upto - before
    return dist


def lru_hit_rate(distances: np.ndarray, capacity: int) -> float:
    """Hit rate of a fully associative LRU cache of ``capacity`` entries."""
    if len(distances) == 0:
        return 0.0
    return float(((distances >= 0) & (distances < capacity)).mean())


def sector_stream(acc: MemoryAccesses, space: str = "global", kinds: tuple[str, ...] = KINDS,
                  *, with_requests: bool = False):
    """``(sector numbers, kind codes)``: each request's distinct 32-byte sectors (byte
    address // 32), request after request in execution order; with ``with_requests``
    also the request number of each (the per-warp, per-instruction sector sets)."""
    part = acc.select(space=space)
    if kinds != KINDS:
        keep = np.isin(part.kind, [KINDS.index(k) for k in kinds])
        part = MemoryAccesses(*(getattr(part, f)[keep] for f in part.__dataclass_fields__))
    if len(part) == 0:
        empty = (np.zeros(0, np.uint64), np.zeros(0, np.int8))
        return (*empty, np.zeros(0, np.int64)) if with_requests else empty
    rows, address = sector_addresses(part)
    sector = address // np.uint64(SECTOR)
    req = part.request[rows]
    order = np.lexsort((sector, req))
    r, s = req[order], sector[order]
    new = np.r_[True, (r[1:] != r[:-1]) | (s[1:] != s[:-1])]
    if with_requests:
        return s[new], part.kind[rows][order][new], r[new]
    return s[new], part.kind[rows][order][new]


@dataclass(frozen=True)
class CacheResult:
    """Hits of a cache simulation, per access of the stream given to it."""

    hits: np.ndarray
    counted: np.ndarray

    @property
    def accesses(self) -> int:
        return int(self.counted.sum())

    @property
    def hit_count(self) -> int:
        return int((self.hits & self.counted).sum())

    @property
    def misses(self) -> int:
        return self.accesses - self.hit_count

    @property
    def hit_rate(self) -> float:
        return self.hit_count / self.accesses if self.accesses else 0.0


def simulate_cache(sectors: np.ndarray, *, size: int, line: int = 128, sector: int = SECTOR,
                   ways: int | None = None, stores: np.ndarray | None = None,
                   allocate_on_store: bool = True) -> CacheResult:
    """Sectored set-associative LRU cache over a stream of sector numbers.

    Parameters
    ----------
    sectors
        Sector numbers (byte address // ``sector``) in access order.
    size, line, sector
        Capacity, line and sector size in bytes.
    ways
        Lines per set; None for a fully associative cache.
    stores
        Boolean per access: a store. With ``allocate_on_store`` False (an L1 that
        writes through), stores neither allocate nor count as accesses.
    """
    sectors = np.asarray(sectors, np.uint64)
    n = len(sectors)
    counted = np.ones(n, bool)
    if n == 0:
        return CacheResult(np.zeros(0, bool), counted)
    per_line = line // sector
    lines = sectors // np.uint64(per_line)
    total_lines = max(size // line, 1)
    ways = total_lines if ways is None else ways
    sets = max(total_lines // ways, 1)
    use = np.ones(n, bool)
    if stores is not None and not allocate_on_store:
        use = ~np.asarray(stores, bool)
        counted = use.copy()
    idx = np.flatnonzero(use)
    set_of = (lines[idx] % np.uint64(sets)).astype(np.int64)
    order = np.argsort(set_of, kind="stable")
    seq = idx[order]
    dist = reuse_distances(lines[seq])
    line_hit = (dist >= 0) & (dist < ways)
    hits = np.zeros(n, bool)
    hits[seq] = _sector_hits(sectors[seq], lines[seq], line_hit)
    return CacheResult(hits, counted)


def _sector_hits(sectors: np.ndarray, lines: np.ndarray, line_hit: np.ndarray) -> np.ndarray:
    """A sector hits if its line hits and the line has not missed since the sector's
    previous access (so the sector is still filled)."""
    prev = _previous(sectors)
    order = np.argsort(lines, kind="stable")
    misses = np.zeros(len(lines), np.int64)
    cum = np.cumsum(~line_hit[order])
    misses[order] = cum
    ok = prev >= 0
    out = np.zeros(len(sectors), bool)
    q = np.flatnonzero(ok)
    out[q] = line_hit[q] & (misses[q] == misses[prev[q]])
    return out

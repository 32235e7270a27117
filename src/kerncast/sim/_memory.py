"""What each memory request of a traced round costs: caches, sectors, wavefronts.

Every warp-level request of the round (one memory instruction executed by one warp)
gets, from the trace's addresses:

* global and local requests: their distinct 32-byte sectors, and per sector where it
  is served — the SM's L1 (a sectored LRU cache of the L1 capacity left beside the
  round's shared memory; stores write through without allocating; atomics bypass
  it), the L2, or DRAM. A sector that misses L1 comes from DRAM when the round
  touches it for the first time or when its reuse distance in the round's L1-miss
  stream exceeds this SM's share of the L2 (the L2 divided among the SMs in use);
  otherwise from the L2;
* shared requests: their wavefronts (bank conflicts replay);
* const and param requests: one pass.

The result is keyed by ``(warp, step, pc)`` so the pipeline can find a request when
the warp's stream reaches that instruction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kerncast.trace import KINDS, SPACES, bank_conflicts, reuse_distances, simulate_cache
from kerncast.trace._coalesce import SECTOR, sector_addresses

__all__ = ["RequestCost", "request_costs"]

_GLOBAL, _LOCAL, _SHARED = SPACES.index("global"), SPACES.index("local"), SPACES.index("shared")
_LOAD, _STORE, _ATOMIC = KINDS.index("load"), KINDS.index("store"), KINDS.index("atomic")
_LOCAL_TAG = np.uint64(1) << np.uint64(56)


@dataclass(frozen=True)
class RequestCost:
    """The cost of one warp-level memory request."""

    kind: int          # index into KINDS
    space: int         # index into SPACES
    sectors: int       # distinct 32-byte sectors (global/local)
    l2: int            # sectors served by the L2
    dram: int          # sectors served by DRAM
    wavefronts: int    # shared-memory wavefronts (1 for other spaces)
    lanes: int


def _request_table(acc) -> dict[str, np.ndarray]:
    ids, first = np.unique(acc.request, return_index=True)
    return {"id": ids, "warp": acc.warp[first], "step": acc.step[first], "pc": acc.pc[first],
            "space": acc.space[first], "kind": acc.kind[first],
            "lanes": np.bincount(np.searchsorted(ids, acc.request), minlength=len(ids))}


def _sector_rows(acc) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(request, sector, kind) of each distinct sector of the global and local requests."""
    keep = np.isin(acc.space, (_GLOBAL, _LOCAL))
    if not keep.any():
        empty = np.zeros(0, np.int64)
        return empty, empty.astype(np.uint64), empty.astype(np.int8)
    part = type(acc)(*(getattr(acc, f)[keep] for f in acc.__dataclass_fields__))
    rows, address = sector_addresses(part)
    sector = address // np.uint64(SECTOR)
    sector = np.where(part.space[rows] == _LOCAL, sector | _LOCAL_TAG, sector)
    req = part.request[rows]
    order = np.lexsort((sector, req))
    r, s, k = req[order], sector[order], part.kind[rows][order]
    new = np.r_[True, (r[1:] != r[:-1]) | (s[1:] != s[:-1])]
    return r[new], s[new], k[new]


def _levels(sectors: np.ndarray, kinds: np.ndarray, l1_bytes: int, l2_share: int) -> tuple:
    """Per sector access: served by L1, and (if not) by DRAM."""
    stores = kinds == _STORE
    atomics = kinds == _ATOMIC
    l1 = simulate_cache(sectors, size=max(l1_bytes, 4096), stores=stores | atomics,
                        allocate_on_store=False).hits & ~stores & ~atomics
    miss = np.flatnonzero(~l1)
    dist = reuse_distances(sectors[miss]) if len(miss) else np.zeros(0, np.int64)
    capacity = max(l2_share // SECTOR, 1)
    dram = np.zeros(len(sectors), bool)
    dram[miss] = (dist < 0) | (dist >= capacity)
    return l1, dram


def request_costs(trace, *, l1_bytes: int, l2_share_bytes: int) -> dict[tuple, RequestCost]:
    """Cost of every memory request of ``trace``, keyed by ``(warp, step, pc)``."""
    acc = trace.memory
    if len(acc) == 0:
        return {}
    table = _request_table(acc)
    index = {int(r): i for i, r in enumerate(table["id"])}
    n = len(table["id"])
    sectors = np.zeros(n, np.int64)
    l2 = np.zeros(n, np.int64)
    dram = np.zeros(n, np.int64)
    req, sec, kinds = _sector_rows(acc)
    if len(req):
        l1_hit, from_dram = _levels(sec, kinds, l1_bytes, l2_share_bytes)
        pos = np.searchsorted(table["id"], req)
        np.add.at(sectors, pos, 1)
        np.add.at(dram, pos, from_dram.astype(np.int64))
        np.add.at(l2, pos, (~l1_hit & ~from_dram).astype(np.int64))
    waves = np.ones(n, np.int64)
    shared = acc.space == _SHARED
    if shared.any():
        part = type(acc)(*(getattr(acc, f)[shared] for f in acc.__dataclass_fields__))
        report = bank_conflicts(part)
        waves[[index[int(r)] for r in report.request]] = np.maximum(report.wavefronts, 1)
    out = {}
    for i in range(n):
        key = (int(table["warp"][i]), int(table["step"][i]), int(table["pc"][i]))
        out[key] = RequestCost(int(table["kind"][i]), int(table["space"][i]), int(sectors[i]),
                               int(l2[i]), int(dram[i]), int(waves[i]), int(table["lanes"][i]))
    return out

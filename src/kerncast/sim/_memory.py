"""Memory requests of a traced round, and the SM's caches that serve them.

:func:`request_costs` turns the trace's per-lane addresses into one
:class:`RequestCost` per warp-level request (one memory instruction executed by one
warp), keyed by ``(warp, step, pc)`` so the pipeline finds it when the warp's stream
reaches that instruction:

* global and local requests: their distinct 32-byte sectors and 128-byte lines, and
  for global ones the share of first fetches that go to DRAM (from
  :mod:`kerncast.sim._sharing`: data other SMs also read is fetched once per wave);
* shared requests: their wavefronts (bank conflicts replay);
* const and param requests: one pass.

:class:`SMCaches` models, in the order the pipeline issues requests, the SM's L1 (a
sector LRU of the capacity left beside the shared memory, write-through without
allocation, with in-flight fills that later requests wait for instead of fetching
again) and this SM's share of the L2 (an LRU of the sectors it has fetched). A sector
that misses both comes from the L2 if another SM fetched it first (the sharing
probability), else from DRAM. A launch whose buffers are in the L2 when it starts
(``warm``: all of them, or the sector ranges of those the protocol copies back before
each launch) fetches nothing of them from DRAM; the first access to each page still
waits about as long, for its address translation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from kerncast.sim._loop import DRAM_CHUNK, compiled, lru_size, new_lru, new_set, reserve_set
from kerncast.sim._sharing import ALL_WARM, NONE_WARM, pair_order
from kerncast._errors import ToolchainError
from kerncast.trace import (KINDS, LINE, SECTOR, SPACES, MemoryAccesses, assemble,
                            bank_conflicts, merge_shared_vectors, printed_module,
                            sector_addresses, vector_groups)

__all__ = ["DRAM_CHUNK", "RequestCost", "RequestCosts", "SMCaches", "match_rows", "request_costs",
           "static_vectors", "vector_carrier"]

_GLOBAL, _LOCAL, _SHARED = SPACES.index("global"), SPACES.index("local"), SPACES.index("shared")
_LOAD, _STORE, _ATOMIC = KINDS.index("load"), KINDS.index("store"), KINDS.index("atomic")
_LOCAL_TAG = 1 << 56


@dataclass(frozen=True)
class RequestCost:
    """One warp-level memory request."""

    kind: int                  # index into KINDS
    space: int                 # index into SPACES
    sectors: tuple[int, ...]   # distinct 32-byte sectors (global/local)
    lines: int                 # distinct 128-byte lines
    wavefronts: int            # shared-memory wavefronts (1 for other spaces)
    share: float               # probability that a first fetch comes from DRAM
    instance: tuple[int, int, int] = (0, 0, 0)  # (warp in block, pc, occurrence)
    nbytes: int = 0            # bytes its lanes move
    traffic: float = 1.0       # share of its sectors' traffic it moves (less when a
                               # what-if coalesces it, see kerncast.sim._whatif)


def match_rows(keys: tuple[np.ndarray, ...], query: tuple[np.ndarray, ...]) -> np.ndarray:
    """For each row of ``query`` (columns of equal length), the last row of ``keys`` with
    the same values in every column, -1 where none has them."""
    n, m = len(keys[0]), len(query[0])
    if m == 0 or n == 0:
        return np.full(m, -1, np.int64)
    cols = [np.concatenate([np.asarray(k, np.int64), np.asarray(q, np.int64)])
            for k, q in zip(keys, query)]
    tag = np.r_[np.zeros(n, np.int8), np.ones(m, np.int8)]
    order = np.lexsort((tag, *reversed(cols)))
    from_keys = order < n
    # the last key row at or before each place in the sorted order (keys of one value
    # keep their own order, and come before the queries of that value)
    last = np.maximum.accumulate(np.where(from_keys, np.arange(n + m), -1))
    found = last >= 0
    at = order[np.maximum(last, 0)]
    for col in cols:
        found &= col[order] == col[at]
    rows = np.empty(m, np.int64)
    queries = ~from_keys
    rows[order[queries] - n] = np.where(found, at, -1)[queries]
    return rows


@dataclass(frozen=True, eq=False)
class RequestCosts(Mapping):
    """Memory requests as columns, one row each, read as the mapping from ``(warp, step,
    pc)`` to :class:`RequestCost` it stands for (the simulation reads the columns)."""

    warp: np.ndarray
    step: np.ndarray
    pc: np.ndarray
    kind: np.ndarray
    space: np.ndarray
    sec_ptr: np.ndarray        # request i's sectors: sec_idx[sec_ptr[i]:sec_ptr[i + 1]]
    sec_idx: np.ndarray
    lines: np.ndarray
    wavefronts: np.ndarray
    share: np.ndarray
    instance: np.ndarray       # (n, 3): warp in block, pc, occurrence
    nbytes: np.ndarray
    traffic: np.ndarray

    @classmethod
    def of(cls, costs: Mapping) -> RequestCosts:
        """``costs`` as columns (itself where it is already)."""
        if isinstance(costs, RequestCosts):
            return costs
        keys, rows = list(costs.keys()), list(costs.values())
        sec_ptr = np.zeros(len(rows) + 1, np.int64)
        np.cumsum([len(c.sectors) for c in rows], out=sec_ptr[1:])

        def col(values, dtype):
            return np.array(values, dtype)
        return cls(col([k[0] for k in keys], np.int64), col([k[1] for k in keys], np.int64),
                   col([k[2] for k in keys], np.int64), col([c.kind for c in rows], np.int64),
                   col([c.space for c in rows], np.int64), sec_ptr,
                   col([x for c in rows for x in c.sectors], np.int64),
                   col([c.lines for c in rows], np.int64),
                   col([c.wavefronts for c in rows], np.int64),
                   col([c.share for c in rows], np.float64),
                   col([c.instance for c in rows], np.int64).reshape(-1, 3),
                   col([c.nbytes for c in rows], np.int64),
                   col([c.traffic for c in rows], np.float64))

    def rows_of(self, warp, step, pc) -> np.ndarray:
        """The row of each ``(warp, step, pc)``, -1 where there is none."""
        return match_rows((self.warp, self.step, self.pc), (warp, step, pc))

    def cost(self, row: int) -> RequestCost:
        a, b = int(self.sec_ptr[row]), int(self.sec_ptr[row + 1])
        return RequestCost(int(self.kind[row]), int(self.space[row]),
                           tuple(self.sec_idx[a:b].tolist()), int(self.lines[row]),
                           int(self.wavefronts[row]), float(self.share[row]),
                           tuple(self.instance[row].tolist()), int(self.nbytes[row]),
                           float(self.traffic[row]))

    @cached_property
    def _index(self) -> dict[tuple[int, int, int], int]:
        return {key: row for row, key in enumerate(zip(self.warp.tolist(), self.step.tolist(),
                                                       self.pc.tolist()))}

    def __getitem__(self, key: tuple[int, int, int]) -> RequestCost:
        return self.cost(self._index[tuple(key)])

    def __iter__(self) -> Iterator[tuple[int, int, int]]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self.warp)


def _request_table(acc) -> dict[str, np.ndarray]:
    ids, first = np.unique(acc.request, return_index=True)
    warp, pc = acc.warp[first], acc.pc[first]
    key = warp * (1 << 24) + pc
    ranking = np.lexsort((ids, key))
    sorted_key = key[ranking]
    start = np.r_[True, sorted_key[1:] != sorted_key[:-1]]
    group = np.maximum.accumulate(np.where(start, np.arange(len(ids)), 0))
    occ = np.empty(len(ids), np.int64)
    occ[ranking] = np.arange(len(ids)) - group
    return {"id": ids, "warp": warp, "step": acc.step[first], "pc": pc, "occ": occ,
            "space": acc.space[first], "kind": acc.kind[first]}


def _sectors(acc, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each request's distinct sectors, ascending (local ones tagged apart), as offsets
    into one array and that array, and its line count."""
    lines = np.zeros(len(ids), np.int64)
    ptr = np.zeros(len(ids) + 1, np.int64)
    keep = np.isin(acc.space, (_GLOBAL, _LOCAL))
    if not keep.any():
        return ptr, np.zeros(0, np.int64), lines
    part = type(acc)(*(getattr(acc, f)[keep] for f in acc.__dataclass_fields__))
    rows, address = sector_addresses(part)
    sector = (address // np.uint64(SECTOR)).astype(np.int64)
    sector = np.where(part.space[rows] == _LOCAL, sector | _LOCAL_TAG, sector)
    pos = np.searchsorted(ids, part.request[rows])
    order = pair_order(sector, pos)
    if order is not None:
        pos, sector = pos[order], sector[order]
    new = np.r_[True, (pos[1:] != pos[:-1]) | (sector[1:] != sector[:-1])]
    pos, sector = pos[new], sector[new]
    # sectors ascend within a request: a new line starts where the line number changes
    line = sector // (LINE // SECTOR)
    first_of_line = np.r_[True, (pos[1:] != pos[:-1]) | (line[1:] != line[:-1])]
    lines += np.bincount(pos[first_of_line], minlength=len(ids))
    np.cumsum(np.bincount(pos, minlength=len(ids)), out=ptr[1:])
    return ptr, sector, lines


def _select(acc, table: dict[str, np.ndarray], keep: np.ndarray) -> tuple:
    """The accesses and request rows of the requests ``keep`` marks."""
    table = {name: column[keep] for name, column in table.items()}
    lanes = np.isin(acc.request, table["id"])
    acc = type(acc)(*(getattr(acc, f)[lanes] for f in acc.__dataclass_fields__))
    return acc, table


def vector_carrier(group: tuple[int, ...], program) -> int:
    """The pc of a merged group that issues its vector access: the first load of a load
    group (its registers are ready together, before any of their readers), the last
    store of a store group (after every value it writes)."""
    store = program.items[group[0]].instr.opcode == "st"
    return max(group) if store else min(group)


def static_vectors(trace, arch: str | None) -> tuple[list[tuple[int, ...]], MemoryAccesses]:
    """The groups of shared accesses that ptxas issues as one vector access, and the
    trace's accesses with each merged into one, at its carrier's pc (the trace's own
    accesses where there is none).

    The groups are those :func:`kerncast.trace.vector_groups` proposes that the SASS for
    ``arch`` holds as a ``LDS.64``/``LDS.128`` (``STS``) on one of their PTX lines, and
    that merged in every traced execution (ptxas merges statically: one SASS access
    wherever the group runs). The tiled matrix multiply's ``ta[ty][k]``, 16 scalar loads
    in the PTX, are 4 ``LDS.128`` on an H100 (8 wavefronts a warp, where 16 scalar loads
    would be 16). ``vector_groups`` alone also proposes groups ptxas leaves scalar
    (reduce_tree's ``s[tid]``, ``s[tid + 1]`` pairs...): without the SASS (no PTX target,
    no ptxas), none is merged."""
    program, acc = trace.program, trace.memory
    groups = vector_groups(program) if program is not None and arch else []
    if groups:
        try:
            text, line_of = printed_module(program.module)
            code = assemble(text, arch, name=program.kernel.name)
        except (ToolchainError, ValueError, KeyError):
            return [], acc
        wide = {ins.line for function in code.functions.values() for block in function.blocks
                for ins in block.instructions
                if ins.base in ("LDS", "STS") and ins.opcode.endswith((".64", ".128"))}
        lines = [{line_of.get(id(program.items[pc].instr)) for pc in g} for g in groups]
        groups = [g for g, on in zip(groups, lines) if on & wide]
    if not groups:
        return [], acc
    merged = merge_shared_vectors(acc, program, groups)
    shared = acc.space == _SHARED
    left = set(np.unique(merged.pc[merged.space == _SHARED]).tolist())
    ran = set(np.unique(acc.pc[shared]).tolist())
    kept = [g for g in groups if g[0] in ran and not left.intersection(g[1:])]
    if len(kept) < len(groups):  # a group that merged in some executions only
        merged = merge_shared_vectors(acc, program, kept) if kept else acc
    return kept, _at_carriers(merged, program, kept)


def _at_carriers(acc: MemoryAccesses, program, vectors: list[tuple[int, ...]]) -> MemoryAccesses:
    """``acc`` (its groups merged) with each group's access moved to its carrier's pc."""
    pc = acc.pc.copy()
    for group in vectors:
        pc[acc.pc == group[0]] = vector_carrier(group, program)
    return replace(acc, pc=pc)


def request_costs(trace, *, sharing=None, wpb: int = 1, only=None,
                  accesses: MemoryAccesses | None = None) -> RequestCosts:
    """Every memory request of ``trace``, keyed by ``(warp, step, pc)``; with ``only``
    (the three columns of such keys, in any number and order), just those (a simulation
    that samples its streams looks up a fraction of the traced requests). ``accesses``
    replaces the trace's own: those :func:`static_vectors` gives, its groups of shared
    accesses merged. Where a key has several requests, the last one stands."""
    acc = trace.memory if accesses is None else accesses
    if len(acc) == 0:
        return RequestCosts.of({})
    table = _request_table(acc)
    keys = (table["warp"], table["step"], table["pc"])
    rows = match_rows(keys, keys if only is None else only)
    keep = np.zeros(len(table["id"]), bool)
    keep[rows[rows >= 0]] = True
    acc, table = _select(acc, table, keep)
    ids = table["id"]
    n = len(ids)
    sec_ptr, sec_idx, lines = _sectors(acc, ids)
    waves = np.ones(n, np.int64)
    shared = acc.space == _SHARED
    if shared.any():
        part = type(acc)(*(getattr(acc, f)[shared] for f in acc.__dataclass_fields__))
        report = bank_conflicts(part)
        waves[np.searchsorted(ids, report.request)] = np.maximum(report.wavefronts, 1)
    shares = np.ones(n, np.float64)
    warp, pc, occ = (np.asarray(table[k], np.int64) for k in ("warp", "pc", "occ"))
    if sharing is not None:
        glob = np.flatnonzero(table["space"] == _GLOBAL)
        wib, pcs, occs = warp[glob] % wpb, pc[glob], occ[glob]
        if hasattr(sharing, "fractions_of"):
            found = sharing.fractions_of(wib, pcs, occs)
        else:
            found = [sharing.fraction(k) for k in zip(wib.tolist(), pcs.tolist(), occs.tolist())]
        shares[glob] = np.asarray(found, np.float64)
    moved = np.bincount(np.searchsorted(ids, acc.request), weights=acc.width,
                        minlength=n).astype(np.int64)
    return RequestCosts(warp, np.asarray(table["step"], np.int64), pc,
                        np.asarray(table["kind"], np.int64), np.asarray(table["space"], np.int64),
                        sec_ptr, sec_idx, lines, waves, shares,
                        np.stack([warp % wpb, pc, occ], axis=1), moved, np.ones(n, np.float64))


class SMCaches:
    """The L1 and this SM's share of the L2, in issue order (see the module docstring).

    Their state lives in arrays (:func:`kerncast.sim._loop.new_lru`) that the compiled
    event loop updates in place, with the same :func:`kerncast.sim._loop.cache_load` and
    :func:`kerncast.sim._loop.cache_store` that :meth:`load` and :meth:`store` call."""

    __slots__ = ("l1", "l2", "warm", "pages", "counts", "dram")

    def __init__(self, l1_bytes: int, l2_share_bytes: int,
                 warm: bool | np.ndarray = False):
        # warm: the sectors that are in the L2 when the launch starts, as [first, end)
        # rows, or True for all (sim._sharing.warm_l2): nothing of them is fetched from
        # DRAM or written back to it during the launch, but the first access to each page
        # waits for its address translation, about as long as a DRAM access
        if isinstance(warm, bool):
            warm = ALL_WARM if warm else NONE_WARM
        self.warm = np.asarray(warm, np.int64).reshape(-1, 2)
        self.pages = new_set()                  # pages translated (when warm)
        self.l1 = new_lru(l1_bytes // SECTOR)   # sector -> time its data arrives
        self.l2 = new_lru(l2_share_bytes // SECTOR)
        self.counts = np.zeros(3, np.int64)     # L1 hits, L2 hits, sectors
        self.dram = np.zeros(1, np.float64)     # expected DRAM sectors

    @property
    def stats(self) -> dict[str, float]:
        l1_hits, l2_hits, sectors = self.counts.tolist()
        return {"l1_hits": l1_hits, "l2_hits": l2_hits, "dram": float(self.dram[0]),
                "sectors": sectors}

    def reserve_pages(self, accesses: int) -> None:
        """Make room for the pages that ``accesses`` more sector loads can translate."""
        if len(self.warm):
            self.pages = reserve_set(self.pages, accesses)

    @property
    def l1_sectors(self) -> int:
        return lru_size(self.l1)

    @property
    def l2_sectors(self) -> int:
        return lru_size(self.l2)

    def load(self, sectors: tuple[int, ...], share: float, now: float,
             lat: tuple[float, float, float]) -> tuple[float, int, float]:
        """(time the data arrives, sectors fetched below L1, expected DRAM sectors).

        DRAM is read in chunks of ``DRAM_CHUNK`` bytes: a sector fetched from DRAM brings
        its neighbours in the chunk into the L2 and costs the whole chunk."""
        self.reserve_pages(len(sectors))
        ready, below, dram = compiled().cache_load(
            self.l1, self.l2, self.pages, self.warm, self.counts, self.dram,
            np.asarray(sectors, np.int64), 0, len(sectors), float(share), float(now),
            *(float(x) for x in lat), np.zeros(max(len(sectors), 1), np.int64))
        return float(ready), int(below), float(dram)

    def store(self, sectors: tuple[int, ...], share: float) -> tuple[int, float]:
        """(sectors written to L2, expected DRAM sectors): written through, the L1 copy
        dropped; a sector this SM writes for the first time is written back to DRAM once,
        a sector it loaded as well (updated in place) included."""
        written, dram = compiled().cache_store(self.l1, self.l2, self.warm, self.dram,
                                               np.asarray(sectors, np.int64), 0, len(sectors))
        return int(written), float(dram)

"""Shared-memory bank conflicts.

Shared memory has 32 banks of 4-byte words (bank = word address mod 32). One
*wavefront* serves one distinct word per bank; lanes reading the same word get
it by broadcast. The rules used here:

* accesses of 1, 2 or 4 bytes: the whole warp is one phase;
* 8- and 16-byte accesses: two phases, lanes 0-15 and 16-31, each lane covering
  two or four consecutive words;
* a phase takes as many wavefronts as the most distinct words any one bank must
  deliver in it; its ideal is its distinct words / 32, rounded up (one wavefront
  moves at most 32 words); the bank conflicts of a request are its wavefronts
  minus its ideal. A conflict-free 64-bit warp access takes 2 wavefronts (one per
  half-warp) and has 0 conflicts, a contiguous 128-bit one 4 and 0, and a 128-bit
  access where each half-warp reads one broadcast vector 2 and 0.

Checked on an H100 against ``l1tex__data_pipe_lsu_wavefronts_mem_shared`` and
``l1tex__data_bank_conflicts_pipe_lsu_mem_shared``: 32-bit word strides 0 to 33,
64-bit strides 1 to 32, 128-bit strides 1 to 8 and the broadcast 128-bit loads of
a tiled matrix multiply give the measured counts exactly
(``tests/trace/fixtures/counters_h100.csv``). Half-warp phases for 128-bit
accesses fit the broadcast case, where quarter-warp phases would predict twice
the wavefronts measured.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kerncast.trace._trace import KINDS, SPACES, MemoryAccesses

__all__ = ["BankReport", "bank_conflicts", "BANKS"]

BANKS = 32


@dataclass(frozen=True)
class BankReport:
    """Per shared-memory request (in the order of ``request``): wavefronts and conflicts."""

    request: np.ndarray
    pc: np.ndarray
    warp: np.ndarray
    kind: np.ndarray
    wavefronts: np.ndarray
    ideal: np.ndarray

    @property
    def conflicts(self) -> np.ndarray:
        return self.wavefronts - self.ideal

    def total(self, kind: str | None = None) -> tuple[int, int]:
        """(wavefronts, conflicts) over requests of ``kind`` (all when None)."""
        keep = np.ones(len(self.request), bool) if kind is None else \
            self.kind == KINDS.index(kind)
        return int(self.wavefronts[keep].sum()), int(self.conflicts[keep].sum())


def bank_conflicts(acc: MemoryAccesses) -> BankReport:
    """Bank analysis of the shared-memory accesses among ``acc``."""
    shared = acc.select(space="shared")
    if len(shared) == 0:
        empty = np.zeros(0, np.int64)
        return BankReport(empty, empty, empty, empty.astype(np.int8), empty, empty)
    width = shared.width
    words = np.maximum(width // 4, 1)
    phases = np.where(width >= 8, 2, 1)
    lanes_per_phase = 32 // phases
    rows = np.repeat(np.arange(len(width)), words)
    offset = np.concatenate([np.arange(n) for n in words]) if len(rows) else rows
    word = shared.address[rows].astype(np.int64) // 4 + offset
    phase = shared.lane[rows].astype(np.int64) // lanes_per_phase[rows]
    req = shared.request[rows].astype(np.int64)
    bank = word % BANKS
    # distinct words per (request, phase, bank)
    order = np.lexsort((word, bank, phase, req))
    r, p, b, w = req[order], phase[order], bank[order], word[order]
    new_word = np.ones(len(r), bool)
    new_word[1:] = (r[1:] != r[:-1]) | (p[1:] != p[:-1]) | (b[1:] != b[:-1]) | (w[1:] != w[:-1])
    group = np.cumsum((np.r_[True, (r[1:] != r[:-1]) | (p[1:] != p[:-1]) | (b[1:] != b[:-1])]))
    per_bank = np.bincount(group - 1, weights=new_word).astype(np.int64)
    heads = np.flatnonzero(np.r_[True, np.diff(group) != 0])
    bank_req, bank_phase = r[heads], p[heads]
    # most-loaded bank per (request, phase), then sum over phases
    key = bank_req * 8 + bank_phase
    uniq, inverse = np.unique(key, return_inverse=True)
    worst = np.zeros(len(uniq), np.int64)
    np.maximum.at(worst, inverse.reshape(-1), per_bank)
    req_of_phase = uniq // 8
    distinct = np.bincount(inverse.reshape(-1), weights=per_bank).astype(np.int64)
    requests, inv = np.unique(req_of_phase, return_inverse=True)
    wavefronts = np.bincount(inv.reshape(-1), weights=worst).astype(np.int64)
    ideal = np.bincount(inv.reshape(-1), weights=-(-distinct // BANKS)).astype(np.int64)
    first = np.full(int(shared.request.max()) + 1, -1, np.int64)
    first[shared.request[::-1]] = np.arange(len(shared.request))[::-1]
    pick = first[requests]
    return BankReport(requests, shared.pc[pick], shared.warp[pick], shared.kind[pick],
                      wavefronts, ideal)


_ = SPACES

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

from kerncast.trace._coalesce import group_rows, ramp
from kerncast.trace._trace import KINDS, MemoryAccesses

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
    lanes_per_phase = np.where(width >= 8, 16, 32)
    rows = np.repeat(np.arange(len(width)), words)
    word = shared.address[rows].astype(np.int64) // 4 + ramp(words)
    phase = shared.lane[rows].astype(np.int64) // lanes_per_phase[rows]
    group = shared.request[rows].astype(np.int64) * 2 + phase
    matrix, ids = group_rows(group, word)
    # distinct words of each (request, phase), then how many of them share a bank
    ordered = np.sort(matrix, axis=1)
    fresh = np.ones(ordered.shape, bool)
    fresh[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    fresh &= ordered >= 0
    distinct = fresh.sum(axis=1)
    row = np.repeat(np.arange(len(ordered)), ordered.shape[1])[fresh.ravel()]
    bank = ordered[fresh] % BANKS
    per_bank = np.bincount(row * BANKS + bank, minlength=len(ordered) * BANKS)
    worst = per_bank.reshape(len(ordered), BANKS).max(axis=1)
    req_of_phase = ids // 2
    requests, inv = np.unique(req_of_phase, return_inverse=True)
    wavefronts = np.bincount(inv.reshape(-1), weights=worst).astype(np.int64)
    ideal = np.bincount(inv.reshape(-1), weights=-(-distinct // BANKS)).astype(np.int64)
    first = np.full(int(shared.request.max()) + 1, -1, np.int64)
    first[shared.request[::-1]] = np.arange(len(shared.request))[::-1]
    pick = first[requests]
    return BankReport(requests, shared.pc[pick], shared.warp[pick], shared.kind[pick],
                      wavefronts, ideal)

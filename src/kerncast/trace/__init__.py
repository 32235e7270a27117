"""kerncast.trace: warp traces of emulated launches and their memory analyses.

The emulator (:mod:`kerncast.emu`) fills a :class:`TraceBuilder`; the resulting
:class:`Trace` gives per-warp instruction streams, instruction counts by class,
and per-lane memory accesses, which the analyses here turn into coalesced sectors
and lines, shared-memory bank conflicts, cache hit rates (set-associative LRU and
reuse distances), Nsight-Compute-comparable totals and an estimated SASS
instruction count.
"""

from kerncast.trace._trace import KINDS, SPACES, MemoryAccesses, Trace, TraceBuilder, WarpStream

__all__ = ["KINDS", "SPACES", "MemoryAccesses", "Trace", "TraceBuilder", "WarpStream"]

"""kerncast.trace: warp traces of emulated launches and their memory analyses.

The emulator (:mod:`kerncast.emu`) fills a :class:`TraceBuilder`; the resulting
:class:`Trace` gives per-warp instruction streams, instruction counts by class,
and per-lane memory accesses, which the analyses here turn into coalesced sectors
and lines (:func:`requests`), shared-memory bank conflicts (:func:`bank_conflicts`),
cache hit rates (:func:`simulate_cache`, :func:`reuse_distances`),
Nsight-Compute-comparable totals (:func:`kernel_totals`) and an estimated SASS
instruction count (:func:`estimate_sass`).
"""

from typing import Any

from kerncast._lazy import LazyNames

from kerncast.trace._banks import BANKS, BankReport, bank_conflicts
from kerncast.trace._cache import (
    CacheResult, lru_hit_rate, reuse_distances, sector_stream, simulate_cache,
)
from kerncast.trace._coalesce import LINE, SECTOR, Requests, requests, sector_addresses
from kerncast.trace._predicate import IF_CONVERSION_LIMIT, if_converted_regions, predicated_issues
from kerncast.trace._sass import (
    FIXED_FACTORS, SASS_FACTORS, SASS_PRIORS, estimate_sass, fit_sass_factors, sass_factor,
)
from kerncast.trace._totals import flop_weights, kernel_totals
from kerncast.trace._trace import KINDS, SPACES, MemoryAccesses, Trace, TraceBuilder, WarpStream
from kerncast.trace._vectorize import merge_shared_vectors, vector_groups

# The real SASS (ptxas and nvdisasm) and its mapping, loaded on first use.
_LAZY = {"assemble": "_sasscode", "assemble_many": "_sasscode", "tools_signature": "_sasscode",
         "map_sass": "_sassmap", "printed_module": "_sassmap"}

__all__ = [
    "BANKS", "BankReport", "FIXED_FACTORS", "IF_CONVERSION_LIMIT", "SASS_PRIORS",
    "CacheResult", "KINDS", "LINE", "MemoryAccesses", "Requests", "SASS_FACTORS", "SECTOR",
    "SPACES", "Trace", "TraceBuilder", "WarpStream", "bank_conflicts", "estimate_sass",
    "fit_sass_factors", "flop_weights", "if_converted_regions", "predicated_issues", "kernel_totals",
    "lru_hit_rate", "merge_shared_vectors", "requests", "reuse_distances", "sass_factor",
    "sector_addresses", "sector_stream", "simulate_cache", "vector_groups",
    "assemble", "assemble_many", "map_sass", "printed_module", "tools_signature",
]


_lazy = LazyNames(__name__, _LAZY, globals())


def __getattr__(name: str) -> Any:
    return _lazy.get(name)


def __dir__() -> list[str]:
    return _lazy.names()

"""What-if fixes: a launch re-simulated with one of its limiters removed.

GPUPerf's benefit indicators (the survey's Section 4) ask what a kernel would gain if
one inefficiency went away. Here the static simulator answers by running the same
round again with the inefficiency taken out of its inputs, so that every other limiter
(the pipes, the caches, DRAM, the barriers, the waves) still bounds the result:

``bank-conflicts``
    every shared-memory request served in the fewest wavefronts its bytes need
    (``ceil(bytes / 128)``): what a padded or swizzled layout gives;
``uncoalesced``
    every global request moves its lanes' bytes in the fewest lines and sectors they
    need, at the load/store path, on the L2 and from DRAM (loads): what a coalesced
    layout moving the same data gives. The cache keeps the request's real sectors, so
    reuse stays what the kernel has; stores still write back each sector once;
``occupancy``
    as many resident blocks per SM as the warp and block slots allow, registers and
    shared memory set aside (at most 32 registers a thread fill the register file at
    full occupancy);
``divergence``
    the threads of each divergent segment regrouped into full warps: a warp issues a
    segment it ran with ``a`` of its ``w`` lanes ``a / w`` as often (each segment keeps
    a running credit, so a 4-way split of a loop issues a quarter of each branch's
    iterations). The memory requests of the segments left out are not moved elsewhere.

Each fix is a counterfactual of the model, not a rewrite of the kernel: the tiled
transpose that fixes the naive one's uncoalesced stores also adds shared-memory traffic
and barriers, which the ``uncoalesced`` fix does not. ``benchmarks/whatif_accuracy.py``
compares the predicted gains with measured pairs of corpus variants.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

import numpy as np

from kerncast._errors import InputError
from kerncast.devices import Device, occupancy
from kerncast.sim._memory import RequestCosts
from kerncast.trace import SPACES, WarpStream

__all__ = ["FIXES", "check_fixes", "fix_costs", "fix_streams", "fixed_blocks_per_sm"]

FIXES: dict[str, str] = {
    "bank-conflicts": "shared-memory requests without bank conflicts",
    "uncoalesced": "global requests coalesced (the fewest sectors their bytes need)",
    "occupancy": "full occupancy (registers and shared memory no limit)",
    "divergence": "divergent threads regrouped into full warps",
}

_SHARED, _GLOBAL = SPACES.index("shared"), SPACES.index("global")
_FULL_OCCUPANCY_REGISTERS = 32


def check_fixes(fixes: Iterable[str]) -> frozenset[str]:
    """``fixes`` as a set, or an :class:`InputError` naming the unknown ones."""
    chosen = frozenset(fixes)
    unknown = sorted(chosen - set(FIXES))
    if unknown:
        raise InputError(f"unknown what-if fix {', '.join(unknown)}; choose from "
                         f"{', '.join(FIXES)}")
    return chosen


def fix_costs(costs: Mapping, fixes: frozenset[str]) -> Mapping:
    """The memory requests with the ``bank-conflicts`` and ``uncoalesced`` fixes applied:
    a shared request in as few wavefronts as its bytes need, a global one in as few
    sectors and lines (moving that share of its sectors' traffic)."""
    if not fixes & {"bank-conflicts", "uncoalesced"}:
        return costs
    table = RequestCosts.of(costs)
    waves, lines, traffic = table.wavefronts.copy(), table.lines.copy(), table.traffic.copy()
    nbytes = table.nbytes
    if "bank-conflicts" in fixes:
        shared = table.space == _SHARED
        waves[shared] = np.minimum(waves[shared], _least(nbytes[shared], 128))
    if "uncoalesced" in fixes:
        count = np.diff(table.sec_ptr)
        glob = (table.space == _GLOBAL) & (count > 0)
        sectors = np.minimum(count[glob], _least(nbytes[glob], 32))
        lines[glob] = np.minimum(lines[glob], _least(nbytes[glob], 128))
        traffic[glob] = sectors / count[glob]
    return replace(table, wavefronts=waves, lines=lines, traffic=traffic)


def _least(nbytes: np.ndarray, unit: int) -> np.ndarray:
    return np.maximum(1, np.ceil(nbytes / unit)).astype(np.int64)


def fixed_blocks_per_sm(dev: Device, threads_per_block: int, registers: int,
                        blocks_per_sm: int) -> int:
    """Resident blocks per SM at full occupancy: the warp and block slots' limit."""
    full = occupancy(dev, threads_per_block, min(registers, _FULL_OCCUPANCY_REGISTERS), 0)
    return max(blocks_per_sm, full.blocks_per_sm)


def fix_streams(streams: dict[int, WarpStream]) -> dict[int, WarpStream]:
    """Every warp's stream with its divergent segments regrouped (``divergence``)."""
    return {warp: _converged(stream) for warp, stream in streams.items()}


def _converged(stream: WarpStream) -> WarpStream:
    if len(stream.active) == 0:
        return stream
    full = int(stream.active.max())
    keep = np.ones(len(stream.start), bool)
    credit: dict[tuple[int, int], float] = {}
    starts, ends, active = stream.start.tolist(), stream.end.tolist(), stream.active.tolist()
    for k, (start, end, lanes) in enumerate(zip(starts, ends, active)):
        if lanes >= full:
            continue
        got = credit.get((start, end), 0.0) + lanes / full
        keep[k] = got >= 1.0 - 1e-9
        credit[(start, end)] = got - 1.0 if keep[k] else got
    if keep.all():
        return stream
    return WarpStream(stream.warp, stream.start[keep], stream.end[keep], stream.active[keep],
                      stream.order[keep])

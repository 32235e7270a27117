"""If-conversion: short branches that ptxas turns into predicated code.

For a conditional forward branch over a short straight region (``@%p bra L``
skipping a few instructions, with no other control flow, no label inside and no
global, local, generic or atomic memory access), ptxas usually emits the
region's instructions predicated instead of a branch.
Every warp reaching the branch then *issues* them, the warps whose lanes all
skip the region with their predicate off. Nsight Compute counts those issues in
``smsp__inst_executed`` and their memory instructions as requests (with no
sectors or wavefronts). The PTX emulation runs the branch instead, so warps that
skip never issue the region; :func:`predicated_issues` gives the issues to add,
from the number of warp executions that took each such branch with all their
active lanes (``Trace.skipped``).

The region limit stands in for ptxas's cost model. On the 92 H100 measurements
of ``tools/trace_counters.py`` (micro-kernels, test kernels, the corpus) the
memory request counts of 81 cases match exactly with any limit from 6 to 16 PTX
instructions (80 with 4, 77 without the model); 8 is used.
"""

from __future__ import annotations

import numpy as np

__all__ = ["if_converted_regions", "predicated_issues", "IF_CONVERSION_LIMIT"]

IF_CONVERSION_LIMIT = 8
_CONTROL = frozenset(("bra", "brx", "ret", "exit", "trap", "call"))


def _straight(item) -> bool:
    """Instructions ptxas predicates: ALU work and shared-memory accesses (it keeps a
    branch around global, local and generic accesses and atomics)."""
    if item.kind not in ("op", "bind"):
        return False
    ins = item.instr
    if item.kind == "op" and ins.opcode in _CONTROL:
        return False
    if ins.opcode in ("ld", "ldu", "st", "atom", "red", "cp") and ins.space not in (
            "shared", "param", "const"):
        return False
    return not (ins.opcode in ("bar", "barrier") and ins.mode != "warp")


def if_converted_regions(program, limit: int = IF_CONVERSION_LIMIT) -> dict[int, range]:
    """Branch pc -> the pcs of the short region it skips, for branches ptxas if-converts."""
    targets = {t for item in program.items for t in item.targets}
    regions = {}
    for pc, item in enumerate(program.items):
        ins = item.instr
        if item.kind != "op" or ins.opcode != "bra" or ins.guard is None or not item.targets:
            continue
        end = item.targets[0]
        if not pc + 1 < end <= pc + 1 + limit:
            continue
        region = range(pc + 1, end)
        if any(t in targets for t in range(pc + 2, end)):
            continue
        if all(_straight(program.items[k]) for k in region):
            regions[pc] = region
    return regions


def predicated_issues(trace, limit: int = IF_CONVERSION_LIMIT) -> np.ndarray:
    """Per pc: warp-level issues of predicated-off instructions ptxas would add."""
    extra = np.zeros(len(trace.classes), np.int64)
    skipped = getattr(trace, "skipped", {})
    for branch, region in if_converted_regions(trace.program, limit).items():
        count = skipped.get(branch, 0)
        if count:
            extra[region.start:region.stop] += count
    return extra

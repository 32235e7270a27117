"""Differences between two traces of the same launch (empty when they are equal)."""

from __future__ import annotations

import numpy as np


def trace_differences(a, b) -> list[str]:
    """What differs between traces ``a`` and ``b``: instruction streams (pcs, warps,
    active lanes), memory accesses (lanes, addresses, widths, kinds, spaces),
    barriers, branch and split counts, step counts and the kernel totals."""
    out = []
    for name in ("steps", "thread_steps", "classes", "names", "skipped", "splits",
                 "memory_cutoff", "barriers"):
        if getattr(a, name) != getattr(b, name):
            out.append(f"{name} differ")
    for name in ("blocks", "step_pc0", "step_pc1", "step_offsets", "step_batch", "step_warps",
                 "step_active"):
        x, y = getattr(a, name), getattr(b, name)
        if x.shape != y.shape or not np.array_equal(x, y):
            out.append(f"{name} differ")
    ma, mb = a.memory, b.memory
    for name in ("event", "request", "pc", "warp", "lane", "address", "width", "kind", "space",
                 "step"):
        x, y = getattr(ma, name), getattr(mb, name)
        if x.shape != y.shape or not np.array_equal(x, y):
            out.append(f"memory.{name} differ")
    if not out:
        ta, tb = a.totals(), b.totals()
        if ta != tb:
            out.append("totals differ: " + ", ".join(
                f"{k} {ta.get(k)} != {tb.get(k)}" for k in sorted(set(ta) | set(tb))
                if ta.get(k) != tb.get(k)))
    return out

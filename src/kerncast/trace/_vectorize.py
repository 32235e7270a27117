"""Shared-memory accesses as ptxas issues them: neighbouring scalars merged into vectors.

ptxas merges loads (and stores) of consecutive words of shared memory through the
same address register, within one straight run of code, into one 64- or 128-bit
access when the address is aligned (``ld.shared.f32 [%r8]``, ``[%r8+4]``,
``[%r8+8]``, ``[%r8+12]`` become one ``LDS.128``). That changes requests,
wavefronts and bank conflicts: on an H100 the tiled matrix multiply issues 20
shared loads per tile step where its PTX has 32, and the merged accesses of a
radix sort's ``s_keys[tid * 4 + k]`` are conflict-free where four stride-4
scalar loads would be 4-way conflicts.

:func:`merge_shared_vectors` applies the same rewrite to a trace's accesses:
candidate groups come from the program (same segment, same base register not
written in between (or the same shared variable), offsets ``o, o+w, ...`` with no shared store between loads),
and a group is merged in each execution where all its accesses ran on the same
lanes and every lane's first address is aligned to the merged width.
"""

from __future__ import annotations

import numpy as np

from kerncast.trace._trace import SPACES, MemoryAccesses

__all__ = ["merge_shared_vectors", "vector_groups"]

_SHARED = SPACES.index("shared")


def _candidate(item):
    """``(kind, base register, offset, width)`` of a mergeable shared access, or None."""
    from kerncast.ptx import Address, Reg, Symbol

    ins = item.instr
    if item.kind != "op" or ins.opcode not in ("ld", "st") or ins.space != "shared":
        return None
    if ins.vector != 1 or ins.guard is not None or ins.type is None:
        return None
    size = {"b32": 4, "u32": 4, "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8,
            "f64": 8}.get(ins.type)
    addr = ins.operands[1] if ins.opcode == "ld" else ins.operands[0]
    if size is None or not isinstance(addr, Address):
        return None
    if isinstance(addr.base, Reg):
        return ins.opcode, item.frame.reg(addr.base.name), addr.offset, size
    if isinstance(addr.base, Symbol):
        return ins.opcode, f"symbol:{addr.base.name}@{item.frame.id}", addr.offset, size
    return None


def _runs(members: list[tuple[int, int]], size: int) -> list[tuple[int, ...]]:
    """Aligned runs of consecutive offsets: groups of 4 (128-bit) or 2 (64/128-bit)."""
    members.sort()
    by_offset = {off: pc for off, pc in members}
    groups, used = [], set()
    for off, _ in members:
        if off in used:
            continue
        for count in (4, 2):
            if count * size > 16 or off % (count * size):
                continue
            span = [off + k * size for k in range(count)]
            if all(o in by_offset and o not in used for o in span):
                groups.append(tuple(by_offset[o] for o in span))
                used.update(span)
                break
    return groups


def vector_groups(program) -> list[tuple[int, ...]]:
    """Groups of pcs (in offset order) that ptxas would merge into one vector access."""
    from kerncast.ptx import written_registers

    starts = list(program.segment_starts) + [len(program.items)]
    groups: list[tuple[int, ...]] = []
    for start, end in zip(starts, starts[1:]):
        version: dict[str, int] = {}
        writes = 0
        pending: dict[tuple, list] = {}
        for pc in range(start, end):
            item = program.items[pc]
            cand = _candidate(item)
            if cand is not None:
                kind, base, off, size = cand
                key = (kind, base, version.get(base, 0), size, writes if kind == "ld" else 0)
                pending.setdefault(key, []).append((off, pc))
                if kind == "st":
                    writes += 1
            elif item.kind == "op" and item.instr.opcode in ("st", "atom", "red") and \
                    item.instr.space in ("shared", None):
                writes += 1
            if item.kind == "op":
                for name in written_registers(item.instr):
                    reg = item.frame.reg(name)
                    version[reg] = version.get(reg, 0) + 1
        for key, members in pending.items():
            if len(members) > 1:
                groups += _runs(members, key[3])
    return groups


def merge_shared_vectors(acc: MemoryAccesses, program, groups=None) -> MemoryAccesses:
    """``acc`` with each mergeable group of shared accesses replaced by one vector access
    (the groups :func:`vector_groups` finds, or ``groups``)."""
    groups = vector_groups(program) if groups is None else groups
    if not groups or len(acc) == 0:
        return acc
    bounds = np.flatnonzero(np.r_[True, acc.event[1:] != acc.event[:-1], True])
    first_row = bounds[:-1]
    ev_pc = acc.pc[first_row]
    ev_step = acc.step[first_row]
    index = {(int(p), int(s)): k for k, (p, s) in enumerate(zip(ev_pc, ev_step))
             if acc.space[first_row[k]] == _SHARED}
    drop = np.zeros(len(acc), bool)
    width = acc.width.copy()
    for pcs in groups:
        total = len(pcs) * int(acc.width[acc.pc == pcs[0]][0]) if (acc.pc == pcs[0]).any() \
            else 0
        if not total:
            continue
        for k in np.flatnonzero(ev_pc == pcs[0]).tolist():
            others = [index.get((p, int(ev_step[k]))) for p in pcs[1:]]
            if any(o is None for o in others):
                continue
            lo, hi = bounds[k], bounds[k + 1]
            lanes = (acc.warp[lo:hi], acc.lane[lo:hi])
            same = all(np.array_equal(acc.warp[bounds[o]:bounds[o + 1]], lanes[0]) and
                       np.array_equal(acc.lane[bounds[o]:bounds[o + 1]], lanes[1])
                       for o in others)
            aligned = not (acc.address[lo:hi] % np.uint64(total)).any()
            if same and aligned:
                width[lo:hi] = total
                for o in others:
                    drop[bounds[o]:bounds[o + 1]] = True
    keep = ~drop
    fields = {f: getattr(acc, f)[keep] for f in acc.__dataclass_fields__}
    fields["width"] = width[keep]
    return MemoryAccesses(**fields)

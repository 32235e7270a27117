"""Atomics: atom and red on global, shared and generic addresses.

All lanes of one instruction (over every warp of the group that runs it) are
applied as if executed one after the other in lane order: where several lanes hit
the same address, each gets the value the previous one left, and the memory ends
with the last one's result, exactly as a sequential execution. Distinct addresses
are done in one vectorised step; repeated ones in rounds (one lane per address per
round), or with segmented scans (integer add) and per-address accumulations
(other associative operations) when an address is hit many times.
"""

from __future__ import annotations

import numpy as np

from kerncast.emu._build import Ctx, unsupported
from kerncast.emu._fround import ftz
from kerncast.emu._ops_mem import ATOMIC, locator
from kerncast.emu._types import dtype_of, size_of
from kerncast.ptx import Address, Instruction

__all__ = ["HANDLERS", "apply_atomic"]

_TYPES = frozenset(("b32", "b64", "u32", "u64", "s32", "s64", "f32", "f64"))
_ACCUMULATE = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
               "or": np.bitwise_or, "xor": np.bitwise_xor}
_ROUNDS_LIMIT = 8


def _op_function(op: str, dt: np.dtype):
    """``f(old, b, c) -> new`` for one atomic operation."""
    is_f32 = dt == np.float32
    if op == "add":
        if is_f32:
            return lambda old, b, c: ftz(ftz(old) + ftz(b))
        return lambda old, b, c: old + b
    if op in ("min", "max", "and", "or", "xor"):
        ufunc = _ACCUMULATE[op]
        if dt.kind == "f":
            ufunc = np.fmin if op == "min" else np.fmax
        return lambda old, b, c: ufunc(old, b)
    if op == "exch":
        return lambda old, b, c: b
    if op == "cas":
        return lambda old, b, c: np.where(old == b, c, old)
    if op == "inc":
        return lambda old, b, c: np.where(old >= b, dt.type(0), old + dt.type(1))
    if op == "dec":
        return lambda old, b, c: np.where((old == 0) | (old > b), b, old - dt.type(1))
    raise KeyError(op)


def _broadcast(value, count: int, dt: np.dtype):
    value = np.asarray(value, dt)
    return np.broadcast_to(value, (count,)) if value.ndim == 0 else value


def apply_atomic(view: np.ndarray, index: np.ndarray, op: str, b, c) -> np.ndarray:
    """Apply ``op`` at ``view[index]`` lane after lane; returns each lane's old value."""
    dt = view.dtype
    count = len(index)
    b = _broadcast(b, count, dt)
    c = _broadcast(c, count, dt) if c is not None else b
    func = _op_function(op, dt)
    if count == 1:
        old = view[index]
        view[index] = func(old, b, c)
        return old
    order = np.argsort(index, kind="stable")
    sidx = index[order]
    first = np.empty(count, bool)
    first[0] = True
    np.not_equal(sidx[1:], sidx[:-1], out=first[1:])
    if first.all():
        old = view[index]
        view[index] = func(old, b, c)
        return old
    starts = np.flatnonzero(first)
    seg = np.cumsum(first) - 1
    rank = np.arange(count) - starts[seg]
    sb, sc = b[order], c[order]
    depth = int(rank.max()) + 1
    if op == "add" and dt.kind in "iu":
        old_sorted = _segmented_add(view, sidx, sb, starts, seg)
    elif op == "exch":
        old_sorted = _segmented_exch(view, sidx, sb, first)
    elif op in _ACCUMULATE and depth > _ROUNDS_LIMIT:
        old_sorted = _per_address(view, sidx, sb, starts, op)
    else:
        old_sorted = _rounds(view, sidx, sb, sc, rank, depth, func)
    old = np.empty(count, dt)
    old[order] = old_sorted
    return old


def _segmented_add(view, sidx, sb, starts, seg):
    dt = view.dtype
    wide = np.uint64
    values = sb.astype(dt).view(np.dtype(f"u{dt.itemsize}")).astype(wide)
    csum = np.cumsum(values, dtype=wide)
    before = csum - values
    base = before[starts][seg]
    prefix = before - base
    heads = sidx[starts]
    old_heads = view[heads]
    old_u = old_heads.view(np.dtype(f"u{dt.itemsize}")).astype(wide)
    old_sorted = (old_u[seg] + prefix).astype(np.dtype(f"u{dt.itemsize}")).view(dt)
    ends = np.append(starts[1:], len(sidx)) - 1
    totals = csum[ends] - before[starts]
    view[heads] = (old_u + totals).astype(np.dtype(f"u{dt.itemsize}")).view(dt)
    return old_sorted


def _segmented_exch(view, sidx, sb, first):
    old_sorted = np.empty(len(sidx), view.dtype)
    old_sorted[1:] = sb[:-1]
    heads = np.flatnonzero(first)
    old_sorted[heads] = view[sidx[heads]]
    last = np.append(heads[1:], len(sidx)) - 1
    view[sidx[last]] = sb[last]
    return old_sorted


def _per_address(view, sidx, sb, starts, op):
    """Long runs on one address: a sequential ``accumulate`` per address."""
    dt = view.dtype
    ufunc = _ACCUMULATE[op]
    if dt.kind == "f" and op in ("min", "max"):
        ufunc = np.fmin if op == "min" else np.fmax
    old_sorted = np.empty(len(sidx), dt)
    ends = np.append(starts[1:], len(sidx))
    for start, end in zip(starts.tolist(), ends.tolist()):
        address = sidx[start]
        run = np.empty(end - start + 1, dt)
        run[0] = view[address]
        run[1:] = sb[start:end]
        acc = ufunc.accumulate(run, dtype=dt)
        old_sorted[start:end] = acc[:-1]
        view[address] = acc[-1]
    return old_sorted


def _rounds(view, sidx, sb, sc, rank, depth, func):
    old_sorted = np.empty(len(sidx), view.dtype)
    for r in range(depth):
        lanes = np.flatnonzero(rank == r)
        where = sidx[lanes]
        current = view[where]
        old_sorted[lanes] = current
        view[where] = func(current, sb[lanes], sc[lanes])
    return old_sorted


def _atom(ctx: Ctx, frame, ins: Instruction, pc: int):
    op = ins.atomic_op
    ptype = ins.type
    if ins.vector != 1 or ptype not in _TYPES:
        raise unsupported(ins, f"type .{ptype}" if ins.vector == 1 else "vector atomics")
    if op is None or op == "popc":
        raise unsupported(ins, "no supported atomic operation")
    if op == "add" and ptype in ("b32", "b64"):
        ptype = "u" + ptype[1:]
    if ins.space not in (None, "global", "shared"):
        raise unsupported(ins, f"space .{ins.space}")
    is_red = ins.opcode == "red"
    ops = ins.operands
    addr = ops[0] if is_red else ops[1]
    if not isinstance(addr, Address):
        raise unsupported(ins, "the address must be [reg+offset]")
    sources = ops[1:] if is_red else ops[2:]
    gb = ctx.access.src(frame, sources[0], ptype)
    gc = ctx.access.src(frame, sources[1], ptype) if len(sources) > 1 else None
    put = None if is_red else ctx.access.dst(frame, ops[0], ptype)[1]
    dt = dtype_of(ptype)
    size = size_of(ptype)
    shift = np.uint64(size.bit_length() - 1)
    locate = locator(ctx, frame, addr, ins.space, size, True, pc)
    record = ctx.machine.record_memory
    _op_function(op, dt)

    def atom(lanes):
        sel = lanes.sel
        address, chunks = locate(sel)
        b = gb(sel)
        c = gc(sel) if gc is not None else None
        old = np.empty(len(address), dt) if put is not None else None
        for store, off, pos, _ in chunks:
            bb = b if pos is None or np.ndim(b) == 0 else b[pos]
            cc = c if pos is None or c is None or np.ndim(c) == 0 else c[pos]
            result = apply_atomic(store.view(dt), (off >> shift).view(np.int64), op, bb, cc)
            if old is not None:
                if pos is None:
                    old = result
                else:
                    old[pos] = result
        if put is not None:
            put(sel, old)
        if record is not None:
            record(pc, sel, address, size, chunks, ATOMIC)
    return atom


HANDLERS = {"atom": _atom, "red": _atom}

"""Loads, stores and address conversions: ld/ldu/st (all widths, v2/v4, every space and
generic addressing), cvta/cvta.to, isspacep, cp.async (done at once), prefetch.

Loads of kernel parameters and of the constant bank through a symbol are folded
into constants at translation time.
"""

from __future__ import annotations

import numpy as np

from kerncast.emu._build import Ctx, unsupported
from kerncast.emu._errors import Fault
from kerncast.emu._memory import AccessCache
from kerncast.emu._spaces import WINDOW_BASE
from kerncast.emu._types import dtype_of, size_of
from kerncast.ptx import Address, Imm, Instruction, Symbol

__all__ = ["HANDLERS", "addresses_only", "load_kind", "locator", "LOAD", "STORE", "ATOMIC"]

LOAD, STORE, ATOMIC = 0, 1, 2
_HALF_BITS = {"f16": "b16", "bf16": "b16", "f16x2": "b32", "bf16x2": "b32", "b128": "b64"}
_SPACES = frozenset(("global", "shared", "local", "const", "param"))


def _memory_type(ins: Instruction) -> tuple[str, int, int]:
    """(register type, element bytes, vector width) of a load or store."""
    ptype = ins.type
    if ptype is None:
        raise unsupported(ins, "no type")
    if ptype == "b128":
        raise unsupported(ins, ".b128 accesses")
    rtype = _HALF_BITS.get(ptype, ptype)
    return rtype, size_of(ptype), ins.vector


def _space(ins: Instruction) -> str | None:
    space = ins.space
    if space is not None and space not in _SPACES:
        raise unsupported(ins, f"state space .{space}")
    return space


def load_kind(ins: Instruction) -> int:
    return {"ld": LOAD, "ldu": LOAD, "st": STORE}.get(ins.opcode, ATOMIC)


def _folded(ctx: Ctx, frame, ins: Instruction, addr: Address, rtype: str, esize: int,
            vec: int):
    """ld.param of a kernel parameter or ld.const of a symbol: constants per element."""
    if not isinstance(addr.base, Symbol):
        return None
    space, key, _ = ctx.access.program.resolve(frame, addr.base.name)
    machine = ctx.machine
    if ins.space == "param" and space == "kparam":
        data = machine.kparam_bytes
    elif ins.space == "const" and space == "const":
        data = machine.const_bytes
    else:
        return None
    start = ctx.access.layout.address(space, key) + addr.offset
    dt = dtype_of(rtype)
    if start < 0 or start + esize * vec > len(data):
        return None
    values = [np.frombuffer(bytes(data[start + k * esize:start + (k + 1) * esize]), dt)[0]
              for k in range(vec)]
    writers = ctx.access.dsts(frame, ins.operands[0], rtype)

    def ld_const(lanes):
        for (write, _), value in zip(writers, values):
            write(lanes, value)
    return ld_const


def locator(ctx: Ctx, frame, addr: Address, space: str | None, width: int, write: bool,
            pc: int):
    """``locate(sel) -> (address, chunks)`` for the lanes ``sel`` of a memory access at
    ``pc``: the lanes' addresses and where they fall (see ``Spaces.resolver``); a fault
    is raised with the instruction's pc."""
    get_addr, _ = ctx.access.address(frame, addr, generic=space is None)
    resolve = ctx.machine.spaces.resolver(space)
    cache = AccessCache()

    def locate(sel):
        address = get_addr(sel)
        try:
            return address, resolve(address, width, sel, cache, write)
        except Fault as fault:
            fault.pc = pc
            raise
    return locate


def _ld(ctx: Ctx, frame, ins: Instruction, pc: int):
    rtype, esize, vec = _memory_type(ins)
    addr = ins.operands[1]
    if not isinstance(addr, Address):
        raise unsupported(ins, "the address must be [reg+offset] or [symbol+offset]")
    folded = _folded(ctx, frame, ins, addr, rtype, esize, vec)
    if folded is not None:
        return folded
    puts = [put for _, put in ctx.access.dsts(frame, ins.operands[0], rtype)]
    dt = dtype_of(rtype)
    shift = np.uint64(esize.bit_length() - 1)
    width = esize * vec
    locate = locator(ctx, frame, addr, _space(ins), width, False, pc)
    record = ctx.machine.record_memory

    def ld(lanes):
        sel = lanes.sel
        address, chunks = locate(sel)
        if len(chunks) == 1:
            store, off, _, where = chunks[0]
            view = store.view(dt)
            index = (off >> shift).view(np.int64)
            puts[0](sel, view[index])
            for k in range(1, vec):
                puts[k](sel, view[index + k])
        else:
            _gather_chunks(chunks, puts, sel, dt, shift, vec, len(address))
        if record is not None:
            record(pc, sel, address, width, chunks, LOAD)
    return ld


def _gather_chunks(chunks, puts, sel, dt, shift, vec, count):
    out = [np.empty(count, dt) for _ in range(vec)]
    for store, off, pos, _ in chunks:
        view = store.view(dt)
        index = (off >> shift).view(np.int64)
        for k in range(vec):
            out[k][pos] = view[index + k]
    for put, values in zip(puts, out):
        put(sel, values)


def _st(ctx: Ctx, frame, ins: Instruction, pc: int):
    rtype, esize, vec = _memory_type(ins)
    addr = ins.operands[0]
    if not isinstance(addr, Address):
        raise unsupported(ins, "the address must be [reg+offset] or [symbol+offset]")
    space = _space(ins)
    if space == "const":
        raise unsupported(ins, "stores to the constant bank")
    getters = ctx.access.srcs(frame, ins.operands[1], rtype)
    dt = dtype_of(rtype)
    shift = np.uint64(esize.bit_length() - 1)
    width = esize * vec
    locate = locator(ctx, frame, addr, space, width, True, pc)
    record = ctx.machine.record_memory

    def st(lanes):
        sel = lanes.sel
        address, chunks = locate(sel)
        values = [g(sel) for g in getters]
        for store, off, pos, _ in chunks:
            view = store.view(dt)
            index = (off >> shift).view(np.int64)
            for k, value in enumerate(values):
                if pos is not None and np.ndim(value):
                    value = value[pos]
                view[index + k if k else index] = value
        if record is not None:
            record(pc, sel, address, width, chunks, STORE)
    return st


def addresses_only(ctx: Ctx, frame, ins: Instruction, pc: int):
    """A load, store or atomic (already translated in full, so known to be supported)
    reduced to its addresses: computed, checked and recorded, no value read or written.
    None for a load folded into a constant (it records nothing)."""
    kind = load_kind(ins)
    ops = ins.operands
    if kind == ATOMIC:
        width = size_of(ins.type)
        addr = ops[0] if ins.opcode == "red" else ops[1]
        space = ins.space
    else:
        rtype, esize, vec = _memory_type(ins)
        width = esize * vec
        addr = ops[1] if kind == LOAD else ops[0]
        space = _space(ins)
        if kind == LOAD and _folded(ctx, frame, ins, addr, rtype, esize, vec) is not None:
            return None
    locate = locator(ctx, frame, addr, space, width, kind != LOAD, pc)
    record = ctx.machine.record_memory

    def access(lanes):
        sel = lanes.sel
        address, chunks = locate(sel)
        if record is not None:
            record(pc, sel, address, width, chunks, kind)
    return access


def _cvta(ctx: Ctx, frame, ins: Instruction, pc: int):
    space = ins.space
    if space not in WINDOW_BASE:
        raise unsupported(ins, f"space .{space}")
    ptype = ins.type or "u64"
    to = "to" in ins.flags
    base = WINDOW_BASE[space]
    dt = dtype_of(ptype)
    get = ctx.access.src(frame, ins.operands[1], ptype)
    write = ctx.dst(frame, ins.operands[0], ptype)
    if base == 0:
        return lambda lanes: write(lanes, get(lanes.sl))
    delta = dt.type((-base if to else base) & ((1 << (8 * dt.itemsize)) - 1))
    return lambda lanes: write(lanes, get(lanes.sl) + delta)


def _isspacep(ctx: Ctx, frame, ins: Instruction, pc: int):
    space = ins.space
    if space not in WINDOW_BASE:
        raise unsupported(ins, f"space .{space}")
    get = ctx.access.src(frame, ins.operands[1], "u64")
    write = ctx.dst(frame, ins.operands[0], "pred")
    shift = np.uint64(40)
    windows = [v >> 40 for k, v in WINDOW_BASE.items() if k != "global"]

    def test(lanes):
        win = np.asarray(get(lanes.sl)) >> shift
        if space == "global":
            hit = np.ones(win.shape, bool)
            for value in windows:
                hit &= win != value
        else:
            hit = win == (WINDOW_BASE[space] >> 40)
        write(lanes, hit)
    return test


def _cp(ctx: Ctx, frame, ins: Instruction, pc: int):
    """cp.async global -> shared, performed immediately (the groups are then no-ops)."""
    if "async" not in ins.flags:
        raise unsupported(ins)
    if not ins.operands or {"commit_group", "wait_group", "wait_all"} & set(ins.modifiers):
        return lambda lanes: None  # the copies are done at once: the groups are no-ops
    if {"bulk", "tensor"} & ins.flags or "mbarrier" in ins.name:
        raise unsupported(ins, "bulk and mbarrier copies")
    dst, src, size_op = ins.operands[:3]
    if not isinstance(size_op, Imm):
        raise unsupported(ins, "the copy size must be an immediate")
    size = int(size_op.value)
    src_size = ctx.access.src(frame, ins.operands[3], "u32") if len(ins.operands) > 3 and \
        not isinstance(ins.operands[3], Symbol) else None
    get_dst, _ = ctx.access.address(frame, dst, generic=False)
    get_src, _ = ctx.access.address(frame, src, generic=False)
    to_shared = ctx.machine.spaces.resolver("shared")
    from_global = ctx.machine.spaces.resolver("global")
    cache = AccessCache()
    record = ctx.machine.record_memory
    steps = np.arange(size, dtype=np.uint64)

    def copy(lanes):
        sel = lanes.sel
        s_addr, d_addr = get_src(sel), get_dst(sel)
        try:
            (s_store, s_off, _, _), = from_global(s_addr, size, sel, cache, False)
            (d_store, d_off, _, _), = to_shared(d_addr, size, sel, None, True)
        except Fault as fault:
            fault.pc = pc
            raise
        data = s_store.data[(s_off[:, None] + steps).astype(np.int64)]
        if src_size is not None:
            limit = np.asarray(src_size(sel), np.uint64)
            data = np.where(steps[None, :] < np.reshape(limit, (-1, 1)), data, 0)
        d_store.data[(d_off[:, None] + steps).astype(np.int64)] = data
        if record is not None:
            record(pc, sel, s_addr, size, [(s_store, s_off, None, "global")], LOAD)
            record(pc, sel, d_addr, size, [(d_store, d_off, None, "shared")], STORE)
    return copy


def _noop(ctx: Ctx, frame, ins: Instruction, pc: int):
    return lambda lanes: None


def _createpolicy(ctx: Ctx, frame, ins: Instruction, pc: int):
    write = ctx.dst(frame, ins.operands[0], "b64")
    zero = np.uint64(0)
    return lambda lanes: write(lanes, zero)


HANDLERS = {
    "ld": _ld, "ldu": _ld, "st": _st, "cvta": _cvta, "isspacep": _isspacep, "cp": _cp,
    "prefetch": _noop, "prefetchu": _noop, "applypriority": _noop, "discard": _noop,
    "createpolicy": _createpolicy,
}

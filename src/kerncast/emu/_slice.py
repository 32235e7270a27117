"""Which instructions a trace needs: a backward slice over the program's registers.

The trace records, per executed segment, the warps and their active lanes, and per
memory instruction its lanes and addresses. Which segments run with which lanes is
decided by branch, exit and trap predicates, ``brx`` indices and barrier operands;
which lanes of a memory instruction access which addresses by its guard and its
address operand. Those registers are the roots. A register is *needed* when it is a
root or is read by an instruction that writes a needed register (every writer of a
needed register runs: the analysis is flow-insensitive, so masked and guarded
writes keep their old values right too).

Memory values enter the slice through loads (and atomics) whose destination is
needed. Then the values in that load's state space matter: every store and atomic
that may write that space runs in full, and the registers it stores are needed in
turn, until nothing changes. Loads of kernel parameters and of the constant bank
read values no instruction writes and add nothing. Generic loads make every
writable space matter; a generic store writes values as soon as any space matters.

Every instruction gets a mode:

* ``FULL``: run as usual.
* ``ADDRESSES``: a load, store or atomic whose values nobody needs: its addresses
  are computed, checked (faults fire as before) and recorded, no value moves.
* ``SKIP``: nothing to compute; the instruction still counts in its segment.

Control instructions, barriers and ``cp.async`` always run in full.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from kerncast.ptx import Address, ParamList, Reg, RegPair, Symbol, Vector

__all__ = ["FULL", "ADDRESSES", "SKIP", "Slice", "value_slice"]

FULL, ADDRESSES, SKIP = 0, 1, 2

_CONTROL = frozenset(("bra", "brx", "ret", "exit", "trap"))
_LOADS = frozenset(("ld", "ldu"))
_ATOMICS = frozenset(("atom", "red"))
_NO_DEST = frozenset("""st red bra brx ret exit trap membar fence nanosleep prefetch prefetchu
cp stmatrix sust sured pmevent discard applypriority griddepcontrol setmaxnreg brkpt
""".split())
_WRITABLE = frozenset(("global", "shared", "local", "param"))
_CARRY = "%cc"


@dataclass(frozen=True)
class Slice:
    """Per pc of a program its mode (``FULL``, ``ADDRESSES`` or ``SKIP``), the needed
    registers and the state spaces whose values matter."""

    modes: tuple[int, ...]
    needed: frozenset[str]
    spaces: frozenset[str]

    @property
    def skipped(self) -> int:
        return sum(1 for m in self.modes if m == SKIP)


class _Regs:
    """Program-wide register keys of operands (``.reg`` parameters left as symbols too)."""

    def __init__(self, program) -> None:
        self.known = program.registers

    def of(self, frame, op) -> list[str]:
        if isinstance(op, Reg):
            return [frame.reg(op.name)]
        if isinstance(op, Symbol):
            key = frame.reg(op.name)
            return [key] if key in self.known else []
        if isinstance(op, Vector):
            return [k for e in op.elements for k in self.of(frame, e)]
        if isinstance(op, ParamList):
            return [k for e in op.items for k in self.of(frame, e)]
        if isinstance(op, RegPair):
            return self.of(frame, op.first) + self.of(frame, op.second)
        if isinstance(op, Address):
            return self.of(frame, op.base) if op.base is not None else []
        return []


def _has_dest(ins) -> bool:
    op = ins.opcode
    if op in _NO_DEST or not ins.operands:
        return False
    if op in ("bar", "barrier"):
        return ins.mode == "red"
    return op != "call" and not isinstance(ins.operands[0], Address)


class _Facts:
    """What one instruction reads and writes, split by role."""

    __slots__ = ("kind", "writes", "reads", "roots", "space")

    def __init__(self, kind: str, writes=(), reads=(), roots=(), space=None) -> None:
        self.kind = kind              # op, mem-ld, mem-st, mem-atom, control, none
        self.writes = frozenset(writes)
        self.reads = frozenset(reads)  # read when run in full (guard included)
        self.roots = frozenset(roots)  # read whatever the mode (control, addresses)
        self.space = space


def _load_space(program, item) -> str | None:
    """The space whose values a load reads; None for values nothing writes."""
    ins = item.instr
    space = ins.space
    if space == "const":
        return None
    addr = ins.operands[1] if len(ins.operands) > 1 else None
    if space == "param" and isinstance(addr, Address) and isinstance(addr.base, Symbol):
        try:
            resolved = program.resolve(item.frame, addr.base.name)[0]
        except Exception:  # noqa: BLE001 (translation reports it)
            return "param"
        if resolved == "kparam":
            return None
    return space or "generic"


def _facts(program, regs: _Regs, item) -> _Facts:
    ins, frame = item.instr, item.frame
    guard = [frame.reg(ins.guard.name)] if ins.guard is not None else []
    if item.kind == "bind":
        dst_frame, dst, src_frame, src, _ = item.bind
        return _Facts("op", regs.of(dst_frame, dst), regs.of(src_frame, src))
    if item.kind in ("ret", "trap"):
        return _Facts("control", roots=guard)
    if item.kind != "op":
        return _Facts("none")
    op = ins.opcode
    every = guard + [k for o in ins.operands for k in regs.of(frame, o)]
    if op in _CONTROL or (op in ("bar", "barrier") and ins.mode != "warp"):
        writes = regs.of(frame, ins.operands[0]) if _has_dest(ins) else []
        return _Facts("control", writes, roots=[k for k in every if k not in writes])
    if op in _LOADS:
        dest = regs.of(frame, ins.operands[0])
        addr = regs.of(frame, ins.operands[1]) if len(ins.operands) > 1 else []
        # a load of a kernel parameter or a constant through a symbol is folded into
        # a constant when translated; its translation decides (it records nothing)
        return _Facts("mem-ld", dest, guard + addr, guard + addr, _load_space(program, item))
    if op == "st":
        addr = regs.of(frame, ins.operands[0])
        values = [k for o in ins.operands[1:] for k in regs.of(frame, o)]
        return _Facts("mem-st", (), guard + addr + values, guard + addr, ins.space or "generic")
    if op in _ATOMICS:
        is_red = op == "red"
        dest = [] if is_red else regs.of(frame, ins.operands[0])
        addr = regs.of(frame, ins.operands[0 if is_red else 1])
        values = [k for o in ins.operands[(1 if is_red else 2):] for k in regs.of(frame, o)]
        return _Facts("mem-atom", dest, guard + addr + values, guard + addr,
                      ins.space or "generic")
    if op == "cp":
        return _Facts("control", roots=every, space="cp")
    has_dest = _has_dest(ins)
    writes = regs.of(frame, ins.operands[0]) if has_dest else []
    reads = guard + [k for o in ins.operands[(1 if has_dest else 0):] for k in regs.of(frame, o)]
    if op in ("addc", "subc", "madc"):
        reads.append(_CARRY)
    if "cc" in ins.flags and op in ("add", "sub", "mad", "addc", "subc", "madc"):
        writes = [*writes, _CARRY]
    return _Facts("op", writes, reads)


def _matches(space: str, spaces: set[str]) -> bool:
    """Whether a write to ``space`` may change values that matter."""
    if not spaces:
        return False
    if space == "generic":
        return True
    return space in spaces


def _mark(spaces: set[str], space: str | None) -> bool:
    """Values of ``space`` (None: nothing writes it) matter; returns whether that is news."""
    if space is None:
        return False
    new = set(_WRITABLE) if space == "generic" else {space}
    if new <= spaces:
        return False
    spaces |= new
    return True


_SLICES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def value_slice(program) -> Slice:
    """The modes of ``program``'s instructions for a trace-only run (see the module doc);
    found once per program (every emulation of a prediction asks for it)."""
    found = _SLICES.get(program)
    if found is None:
        found = _SLICES[program] = _value_slice(program)
    return found


def _value_slice(program) -> Slice:
    """:func:`value_slice`, found."""
    regs = _Regs(program)
    facts = [_facts(program, regs, item) for item in program.items]
    needed: set[str] = set()
    for f in facts:
        needed |= f.roots
    spaces: set[str] = set()
    full = [f.kind == "control" for f in facts]
    has_cp = any(f.space == "cp" for f in facts)
    changed = True
    while changed:
        changed = False
        for pc, f in enumerate(facts):
            if full[pc] or f.kind == "none":
                continue
            wanted = bool(f.writes & needed)
            if f.kind == "mem-ld":
                if wanted and _mark(spaces, f.space):
                    changed = True
            elif f.kind == "mem-st":
                wanted = _matches(f.space, spaces)
            elif f.kind == "mem-atom":
                if wanted:
                    if _mark(spaces, f.space):
                        changed = True
                wanted = wanted or _matches(f.space, spaces)
            if wanted:
                full[pc] = True
                needed |= f.reads
                changed = True
        if has_cp and "shared" in spaces and "global" not in spaces:
            spaces.add("global")
            changed = True
    modes = []
    for pc, f in enumerate(facts):
        if full[pc]:
            modes.append(FULL)
        elif f.kind in ("mem-ld", "mem-st", "mem-atom"):
            modes.append(ADDRESSES)
        else:
            modes.append(SKIP)
    return Slice(tuple(modes), frozenset(needed), frozenset(spaces))

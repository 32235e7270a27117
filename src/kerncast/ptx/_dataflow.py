"""Registers read and written by an instruction, liveness, and a divergence analysis.

The divergence analysis marks a register *varying* when lanes of one warp may hold
different values in it: it depends on ``%tid``/``%laneid``/``%lanemask_*``, on an
atomic's result, a shuffle, a ``match``, a local-memory load, a call result (or any
``ld.param`` but of a kernel parameter), a load from a varying address; or it is
written under a varying guard; or it is written between a divergent branch and its
reconvergence point and is live there (a value merged from paths that lanes took
differently). A guarded branch on a varying predicate (or a ``brx.idx`` on a
varying index) is a *divergent-branch candidate*; branches on uniform values
(kernel parameters, ``%ctaid``, ``%ntid``, loop counters that only depend on them)
are not. The analysis is flow-insensitive, hence conservative: a register reused
for a uniform and a varying value counts as varying everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kerncast.ptx._ir import (
    Address, Instruction, Operand, ParamList, Reg, RegPair, SpecialReg, Symbol, TexOperand,
    Vector,
)

if TYPE_CHECKING:
    from kerncast.ptx._cfg import CFG
    from kerncast.ptx._ir import Function

__all__ = ["Divergence", "Liveness", "divergence", "find_divergent_branches", "liveness",
           "read_registers", "written_registers"]

_NO_DEST = frozenset("""st red bra brx ret exit trap membar fence nanosleep prefetch prefetchu
cp stmatrix sust sured pmevent discard applypriority griddepcontrol setmaxnreg brkpt
""".split())
_LANE_VARYING = frozenset(("%tid", "%laneid", "%lanemask_eq", "%lanemask_le", "%lanemask_lt",
                           "%lanemask_ge", "%lanemask_gt"))
_VARYING_RESULT = frozenset(("atom", "shfl", "match", "call", "elect"))
_UNIFORM_RESULT = frozenset(("vote", "activemask", "redux"))


def _has_dest(instr: Instruction) -> bool:
    op = instr.opcode
    if op in _NO_DEST:
        return False
    if op in ("bar", "barrier"):
        return instr.mode == "red"
    if op == "wmma":
        return "store" not in instr.modifiers
    if op == "mbarrier":
        return instr.mode not in ("init", "inval", "expect_tx", "complete_tx")
    return op != "call" and bool(instr.operands)


def _regs(operand: Operand) -> list[str]:
    if isinstance(operand, Reg):
        return [operand.name]
    if isinstance(operand, (Vector, ParamList, TexOperand)):
        items = operand.elements if isinstance(operand, Vector) else operand.items
        return [name for item in items for name in _regs(item)]
    if isinstance(operand, RegPair):
        return _regs(operand.first) + _regs(operand.second)
    if isinstance(operand, Address) and isinstance(operand.base, Reg):
        return [operand.base.name]
    return []


def written_registers(instr: Instruction) -> tuple[str, ...]:
    """Registers ``instr`` writes (destination operand; register returns of ``call``)."""
    if instr.opcode == "call":
        spec = instr.call
        return tuple(name for op in spec.returns for name in _regs(op)) if spec else ()
    if not _has_dest(instr):
        return ()
    first = instr.operands[0]
    return () if isinstance(first, Address) else tuple(_regs(first))


def read_registers(instr: Instruction) -> tuple[str, ...]:
    """Registers ``instr`` reads: sources, address bases and the guard."""
    skip = 1 if _has_dest(instr) and not isinstance(instr.operands[0], Address) else 0
    names = [instr.guard.name] if instr.guard is not None else []
    operands = instr.operands
    if instr.opcode == "call" and operands and isinstance(operands[0], ParamList):
        operands = operands[1:]
    for operand in operands[skip:]:
        names.extend(_regs(operand))
    return tuple(names)


@dataclass(frozen=True, slots=True)
class Divergence:
    """Result of the divergence analysis (see the module docstring)."""

    varying: frozenset[str]
    branches: tuple[int, ...]


def _produces_varying(instr: Instruction, varying: set[str], uniform_params: set[str]) -> bool:
    if instr.guard is not None and instr.guard.name in varying:
        return True
    op = instr.opcode
    if op in _VARYING_RESULT or (op in ("ld", "ldu") and instr.space in ("local", None)
                                 and not _uniform_generic(instr, varying)):
        return True
    if op == "ld" and instr.space == "param":
        address = instr.operands[1]
        return not (isinstance(address, Address) and isinstance(address.base, Symbol)
                    and address.base.name in uniform_params)
    if op in _UNIFORM_RESULT:
        return False
    for operand in instr.operands:
        if isinstance(operand, SpecialReg) and operand.base in _LANE_VARYING:
            return True
        if isinstance(operand, Vector) and any(isinstance(e, SpecialReg) and
                                               e.base in _LANE_VARYING for e in operand.elements):
            return True
    return any(name in varying for name in read_registers(instr))


def _uniform_generic(instr: Instruction, varying: set[str]) -> bool:
    """A generic load from a uniform address is taken as uniform (global memory)."""
    if instr.space is not None:
        return False
    address = instr.operands[1] if len(instr.operands) > 1 else None
    return isinstance(address, Address) and not (isinstance(address.base, Reg)
                                                 and address.base.name in varying)


def _branch_varies(instr: Instruction, varying: set[str]) -> bool:
    if instr.guard is not None and instr.guard.name in varying:
        return True
    if instr.opcode == "brx":
        return any(name in varying for name in _regs(instr.operands[0]))
    return False


def _region_writes(cfg: CFG, branch: int, stop: int | None) -> set[str]:
    """Registers written in blocks reachable from the branch before its reconvergence."""
    instructions = cfg.function.instructions
    stop_block = cfg.block_of[stop] if stop is not None else None
    start = cfg.block_at(branch)
    seen, work = set(), [s for s in start.successors if s != stop_block]
    written: set[str] = set()
    while work:
        block = work.pop()
        if block in seen:
            continue
        seen.add(block)
        bb = cfg.blocks[block]
        for index in range(bb.start, bb.end):
            written.update(written_registers(instructions[index]))
        work.extend(s for s in bb.successors if s != stop_block and s not in seen)
    return written


@dataclass(frozen=True, slots=True)
class Liveness:
    """Registers live on entry to and on exit from every block."""

    live_in: tuple[frozenset[str], ...]
    live_out: tuple[frozenset[str], ...]


def liveness(target: Function | CFG) -> Liveness:
    """Backward live-register analysis over the basic blocks."""
    from kerncast.ptx._cfg import _cfg

    cfg = _cfg(target)
    instructions = cfg.function.instructions
    uses: list[set[str]] = []
    defs: list[set[str]] = []
    for block in cfg.blocks:
        used: set[str] = set()
        defined: set[str] = set()
        for index in range(block.start, block.end):
            instr = instructions[index]
            used.update(r for r in read_registers(instr) if r not in defined)
            if instr.guard is None:  # a guarded write may leave the old value live
                defined.update(written_registers(instr))
        uses.append(used)
        defs.append(defined)
    live_in: list[frozenset[str]] = [frozenset()] * len(cfg.blocks)
    live_out: list[frozenset[str]] = [frozenset()] * len(cfg.blocks)
    changed = True
    while changed:
        changed = False
        for block in reversed(cfg.blocks):
            out = frozenset().union(*(live_in[s] for s in block.successors))
            new_in = frozenset(uses[block.index] | (out - defs[block.index]))
            if new_in != live_in[block.index] or out != live_out[block.index]:
                live_in[block.index], live_out[block.index] = new_in, out
                changed = True
    return Liveness(tuple(live_in), tuple(live_out))


def divergence(target: Function | CFG) -> Divergence:
    """Varying registers and divergent-branch candidates of a function."""
    from kerncast.ptx._cfg import _cfg

    cfg = _cfg(target)
    instructions = cfg.function.instructions
    points = cfg.reconvergence
    func = cfg.function
    uniform_params = {p.name for p in func.params} if func.is_entry else set()
    live_in = liveness(cfg).live_in
    varying: set[str] = set()
    divergent: set[int] = set()
    regions: dict[int, set[str]] = {}
    changed = True
    while changed:
        changed = False
        for instr in instructions:
            written = written_registers(instr)
            if written and not varying.issuperset(written) and \
                    _produces_varying(instr, varying, uniform_params):
                varying.update(written)
                changed = True
        for index, stop in points.items():
            if index in divergent or not _branch_varies(instructions[index], varying):
                continue
            divergent.add(index)
            if stop is None:
                continue
            region = regions.setdefault(index, _region_writes(cfg, index, stop)
                                        & live_in[cfg.block_of[stop]])
            if not varying.issuperset(region):
                varying.update(region)
                changed = True
    return Divergence(frozenset(varying), tuple(sorted(divergent)))


def find_divergent_branches(cfg: CFG) -> tuple[int, ...]:
    return divergence(cfg).branches

"""Operand checks per opcode: counts and kinds, so the emulator can trust the IR.

Only the core opcodes (those a SIMT emulator executes) are checked; the rest of the
ISA is accepted as parsed.
"""

from __future__ import annotations

from collections.abc import Sequence

from kerncast.ptx._ir import (
    Address, Imm, Label, Operand, ParamList, Reg, RegPair, Sink, SpecialReg, Vector,
)

__all__ = ["check_operands"]

# Operand count (min, max) per opcode; optional cache-policy operands included.
_ARITY: dict[str, tuple[int, int]] = {
    **dict.fromkeys("abs neg not cnot popc clz brev bfind rcp sqrt rsqrt sin cos lg2 ex2 tanh "
                    "testp isspacep ldu cvta mov".split(), (2, 2)),
    **dict.fromkeys("add sub mul div rem and or xor shl shr mul24 addc subc copysign bmsk "
                    "szext".split(), (3, 3)),
    **dict.fromkeys("mad fma mad24 madc sad selp slct bfe prmt shf dp4a dp2a fns".split(),
                    (4, 4)),
    **dict.fromkeys(("min", "max", "setp", "set"), (3, 4)),
    **dict.fromkeys(("bfi", "lop3"), (5, 5)),
    "cvt": (2, 4), "ld": (2, 3), "st": (2, 3), "atom": (3, 5), "red": (2, 3),
    "shfl": (4, 5), "vote": (2, 3), "match": (3, 3), "activemask": (1, 1), "redux": (3, 3),
    "bra": (1, 1), "brx": (2, 2), "ret": (0, 0), "exit": (0, 0), "trap": (0, 0),
    "bar": (0, 4), "barrier": (0, 4), "membar": (0, 0), "nanosleep": (1, 1), "prefetch": (1, 1),
}
# Where the memory operand sits.
_ADDRESS_AT = {"ld": 1, "ldu": 1, "st": 0, "atom": 1, "red": 0, "prefetch": 0}
_NO_DEST = frozenset("st red bra brx ret exit trap bar barrier membar nanosleep prefetch "
                     "call".split())
_DESTINATIONS = (Reg, Vector, RegPair, Sink)


def _count(opcode: str, operands: Sequence[Operand]) -> str | None:
    low, high = _ARITY[opcode]
    n = len(operands)
    if low <= n <= high:
        return None
    want = str(low) if low == high else f"{low} to {high}"
    return f"'{opcode}' takes {want} operand{'s' if high != 1 else ''}, found {n}"


def _destination(opcode: str, modifiers: Sequence[str], first: Operand) -> str | None:
    if opcode in _NO_DEST and not (opcode in ("bar", "barrier") and "red" in modifiers):
        return None
    if isinstance(first, _DESTINATIONS):
        if isinstance(first, Reg) and first.negated:
            return "a destination register cannot be negated"
        return None
    if isinstance(first, SpecialReg):
        return f"special register {first} is read-only"
    return f"'{opcode}' needs a destination register, found {first}"


def _memory(opcode: str, operands: Sequence[Operand]) -> str | None:
    at = _ADDRESS_AT.get(opcode)
    for index, operand in enumerate(operands):
        if index == at:
            if not isinstance(operand, Address):
                return f"'{opcode}' needs a memory operand [...] as operand {index + 1}"
        elif isinstance(operand, Address):
            return f"unexpected memory operand {operand} for '{opcode}'"
    return None


def _kinds(opcode: str, operands: Sequence[Operand]) -> str | None:
    if opcode == "bra":
        return None if isinstance(operands[0], Label) else "'bra' needs a label"
    if opcode == "brx":
        return None if isinstance(operands[1], Label) else \
            "'brx.idx' needs a .branchtargets list as second operand"
    for operand in operands:
        if isinstance(operand, (Label, ParamList)):
            return f"unexpected operand {operand} for '{opcode}'"
    return None


def check_operands(opcode: str, modifiers: Sequence[str],
                   operands: Sequence[Operand]) -> str | None:
    """Why the operands do not fit ``opcode``, or None when they do (or are not checked)."""
    if opcode not in _ARITY:
        if opcode != "call":
            return None
        return None if operands and not isinstance(operands[0], (Imm, Address)) else \
            "'call' needs a target"
    problem = _count(opcode, operands)
    if problem is None and operands:
        problem = (_destination(opcode, modifiers, operands[0]) or _memory(opcode, operands)
                   or _kinds(opcode, operands))
    return problem

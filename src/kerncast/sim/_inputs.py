"""The arguments a static prediction emulates with.

Generating a corpus kernel's inputs at its largest size takes seconds and gigabytes,
yet the timing model only needs the trace: the instructions each warp issues and
the addresses it touches. When neither depends on the values in memory, any values
give the same trace, so the kernel is emulated on zero-filled buffers (allocated
lazily by the operating system: only the pages the emulated blocks touch are ever
materialised). A taint analysis over the kernel's PTX decides: values loaded from
memory (and results of atomics) are tainted, taint flows through every instruction
that reads a tainted register, and the kernel is *data-dependent* if a tainted
register guards a branch or a memory access, or forms an address. Data-dependent
kernels (graph traversals, sparse matrices, histograms, data-dependent branches) are
emulated on their real inputs: the arrays' data, or their generators' values.
"""

from __future__ import annotations

import weakref

from kerncast._errors import InputError
from kerncast.core import Array, Generator, Launch
from kerncast.ptx import Address, read_registers, written_registers

__all__ = ["data_dependent", "emulation_args"]

_SOURCES = {"ld", "ldu", "atom", "tex", "tld4", "suld"}
_UNTAINTED_SPACES = {"param", "const"}


def _is_source(instr) -> bool:
    return instr.opcode in _SOURCES and instr.space not in _UNTAINTED_SPACES


def _address_registers(instr) -> set[str]:
    names = set()
    for op in instr.operands:
        if isinstance(op, Address) and op.base is not None and hasattr(op.base, "name") \
                and type(op.base).__name__ == "Reg":
            names.add(op.base.name)
    return names


def _taint(items) -> set[str]:
    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False
        for item in items:
            if item.kind != "op":
                continue
            instr, frame = item.instr, item.frame
            writes = {frame.reg(r) for r in written_registers(instr)}
            if not writes or writes <= tainted:
                continue
            reads = {frame.reg(r) for r in read_registers(instr)}
            if _is_source(instr) or reads & tainted:
                tainted |= writes
                changed = True
    return tainted


#: the answer per program, while it lives (a sweep asks once per launch of one binary)
_DEPENDENT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def data_dependent(program) -> bool:
    """Whether the trace of ``program`` (an emulator program) can depend on memory values."""
    known = _DEPENDENT.get(program)
    if known is None:
        known = _DEPENDENT[program] = _data_dependent(program)
    return known


def _data_dependent(program) -> bool:
    tainted = _taint(program.items)
    for item in program.items:
        if item.kind != "op":
            continue
        instr, frame = item.instr, item.frame
        guarded = instr.guard is not None and frame.reg(instr.guard.name) in tainted
        addressed = any(frame.reg(r) in tainted for r in _address_registers(instr))
        branches = instr.opcode in ("bra", "brx")
        touches = addressed or instr.opcode in ("ld", "st", "atom", "red", "ldu")
        if (guarded and (branches or touches)) or addressed:
            return True
        if instr.opcode == "brx" and any(frame.reg(r) in tainted for r in read_registers(instr)):
            return True
    return False


def values_repeatable(launch: Launch) -> bool:
    """Whether every array of ``launch`` gets the same values each time it is emulated:
    drawn by a generator from the launch's seed, none holding a caller's data (which the
    caller may change between predictions) or read from a file (which may change)."""
    return all(arg.data is None and not (isinstance(arg.generator, Generator)
                                         and arg.generator.name == "npy")
               for arg in launch.args if isinstance(arg, Array))


def emulation_args(launch: Launch, program) -> tuple[list, str]:
    """The values to emulate ``launch`` with, in parameter order, and ``"generated"`` or
    ``"zeros"``: a data-dependent kernel gets its arrays' data or generated values, any
    other kernel zeros for every array, whatever data it has (its trace is the same, and
    zeros are allocated lazily, where a write into a caller's array would first copy it).
    The emulator may write into the arrays in place: an input it must not change comes
    read-only."""
    if data_dependent(program):
        try:
            return launch.materialise(generate=True, chunked=True), "generated"
        except MemoryError:
            size = f" at size {launch.size!r}" if launch.size else ""
            raise InputError(f"the kernel depends on its input data, and generating its "
                             f"inputs{size} needs more memory than this machine has; "
                             "predict a smaller problem") from None
    return launch.materialise(generate=False, data=False), "zeros"

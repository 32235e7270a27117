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
emulated on their real generated inputs.
"""

from __future__ import annotations

import numpy as np

from kerncast._errors import InputError
from kerncast.corpus import CorpusKernel, LaunchConfig, make_args
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


def data_dependent(program) -> bool:
    """Whether the trace of ``program`` (an emulator program) can depend on memory values."""
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


_GENERATED: dict[tuple, dict] = {}


def _generated(kernel_name: str, size: str, tunables: tuple, seed: int) -> dict:
    """The launch's generated inputs (outputs zero-filled: nothing reads them before
    writing); the last ones are kept for the next configuration
    of the same launch (a sweep), and dropped before others are generated."""
    from kerncast.corpus import get_kernel  # noqa: PLC0415

    key = (kernel_name, size, tunables, seed)
    if key not in _GENERATED:
        _GENERATED.clear()
        kernel = get_kernel(kernel_name)
        _GENERATED[key] = make_args(kernel, kernel.launch(size, dict(tunables)), seed=seed,
                                     poison_outputs=False)
    return _GENERATED[key]


def _zeros(kernel: CorpusKernel, config: LaunchConfig) -> dict:
    args: dict[str, object] = {}
    for arg in kernel.spec.args:
        if arg.kind == "scalar":
            args[arg.name] = np.dtype(arg.dtype).type(kernel.scalar_value(arg, config))
        else:
            args[arg.name] = np.zeros(kernel.buffer_elements(arg, config), dtype=arg.dtype)
    return args


def _shared_inputs(kernel: CorpusKernel, config: LaunchConfig, generated: dict) -> dict:
    """The generated arguments as this emulation may use them: the input buffers as
    read-only views of the kept ones (the emulator copies one only if the kernel
    writes into it), each output buffer a new zero-filled array of its own (written in
    place, and materialised only where the emulated blocks touch it)."""
    args: dict[str, object] = {}
    for arg in kernel.spec.args:
        value = generated[arg.name]
        if arg.kind != "scalar" and arg.intent == "out":
            value = np.zeros(kernel.buffer_elements(arg, config), dtype=arg.dtype)
        elif isinstance(value, np.ndarray):
            value = value.view()
            value.flags.writeable = False
        args[arg.name] = value
    return args


def emulation_args(kernel: CorpusKernel, config: LaunchConfig, program, seed: int = 0) -> tuple[dict, str]:
    """Arguments to emulate ``config`` with, and ``"generated"`` or ``"zeros"``. The
    emulator may write into the arrays in place: an input it must not change comes
    read-only."""
    if data_dependent(program):
        try:
            generated = _generated(kernel.name, config.size,
                                   tuple(sorted(config.tunables.items())), seed)
        except MemoryError:
            raise InputError(f"{kernel.name} depends on its input data, and generating its "
                             f"inputs at size {config.size!r} needs more memory than this "
                             "machine has; predict a smaller size") from None
        return _shared_inputs(kernel, config, generated), "generated"
    return _zeros(kernel, config), "zeros"

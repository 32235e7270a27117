"""Register-bank conflicts of the real SASS, charged to the PTX instructions they come from.

An SM sub-partition reads its register file through two banks, the even and the odd
registers, one register per bank a cycle. A floating-point instruction that reads two
distinct registers of the same bank holds its pipe a cycle longer for each extra read,
unless the operand reuse cache serves one of them: an operand that an instruction
marks ``.reuse`` stays cached in its slot (a, b or c) for the warp's next
instructions, until an instruction reads another register, or the same one without
the mark, through that slot. Which registers an instruction reads is ptxas's choice,
so the SASS of the module decides (``ptxas -lineinfo`` and ``nvdisasm``, as in
:mod:`kerncast.trace._sasscode`).

Measured on an H100 (``tools/register_bank_probe.py``, results and the probes' SASS in
``data/probes/register_banks_h100.json``), warp instructions a cycle per scheduler
with 16 warps each, one dependent chain per thread:

* ``FFMA R4, R4, UR4, R3`` (a multiplier in a uniform register, the addend in an odd
  register): 0.88, the loop's own instructions taking the rest;
* ``FFMA R4, R4, R2, R3`` (arith_mixed's loop: R4 and R2 both even): 0.45;
* four and eight independent chains, whose FFMAs reuse the multiplier and the addend
  from the previous instruction: 0.93 and 0.97; two chains, every other FFMA in
  conflict: 0.64;
* an integer chain whose IADD3 reads two even registers: 0.49, as fast as the same
  chain on uniform registers. The integer pipe (and IMAD, and FP64) takes two cycles a
  warp instruction and reads the operands meanwhile, so only the full-rate
  floating-point instructions (:data:`ARITHMETIC`) are charged.

:func:`conflict_cycles` counts one instruction's extra cycles, :func:`line_conflicts`
averages them over the SASS instructions of each PTX line (a PTX instruction unrolled
into several copies pays their mean) and :func:`charge_conflicts` charges them to the
pipeline's table.
"""

from __future__ import annotations

import re
from dataclasses import replace
from kerncast.trace import assemble, printed_module, tools_signature
from kerncast.sim._pipeline import K_ALU

__all__ = ["ARITHMETIC", "charge_conflicts", "conflict_cycles", "line_conflicts", "pc_conflicts"]

#: SASS opcodes (the mnemonic before the first dot) of the full-rate floating-point
#: pipe, the only ones whose conflicts the probes see
ARITHMETIC = frozenset(("FFMA", "FADD", "FMUL", "HFMA2", "HADD2", "HMUL2"))
_WIDE = (".WIDE", ".64", ".F64")
#: version of the rules above, part of the cache key: bump it when they change
RULES = 1
_REGISTER = re.compile(r"^[-|!~]*(R\d+|RZ)(\.reuse)?")


def _arithmetic(opcode: str) -> bool:
    return opcode.split(".", 1)[0] in ARITHMETIC and not any(w in opcode for w in _WIDE)


def _operands(text: str) -> list[str]:
    body = text.split(None, 1)
    return [o.strip() for o in body[1].split(",")] if len(body) > 1 else []


def conflict_cycles(text: str, cache: dict[int, str]) -> int:
    """Extra issue cycles of one SASS instruction (``text`` without its guard) from
    reads of the same register bank. ``cache`` holds the register each operand slot's
    reuse cache keeps (0, 1, 2 for a, b, c) and is updated: a slot that reads a vector
    register keeps it if the operand is marked ``.reuse`` and drops it otherwise;
    immediates, constants, uniform registers and RZ leave the slot as it was. Other
    instructions than :data:`ARITHMETIC` neither conflict nor touch the cache."""
    opcode = text.split(None, 1)[0] if text.strip() else ""
    if not _arithmetic(opcode):
        return 0
    read = set()
    for slot, operand in enumerate(_operands(text)[1:4]):  # a, b, c: past the destination
        match = _REGISTER.match(operand)
        if not match or match.group(1) == "RZ":
            continue
        reg = match.group(1)
        if cache.get(slot) != reg:
            read.add(reg)
        if match.group(2):
            cache[slot] = reg
        else:
            cache.pop(slot, None)
    per_bank = [0, 0]
    for reg in read:
        per_bank[int(reg[1:]) % 2] += 1
    return max(max(per_bank) - 1, 0)


def line_conflicts(function) -> dict[int, float]:
    """Mean extra issue cycles of the arithmetic SASS instructions of each PTX line of a
    :class:`~kerncast.trace._sasscode.SassFunction` (lines with none are left out;
    loads ptxas hoisted onto a line do not dilute its mean)."""
    total: dict[int, int] = {}
    count: dict[int, int] = {}
    for block in function.blocks:
        cache: dict[int, str] = {}  # nothing cached where a block starts
        for ins in block.instructions:
            cycles = conflict_cycles(ins.text, cache)
            if ins.line and not ins.inherited and _arithmetic(ins.opcode):
                total[ins.line] = total.get(ins.line, 0) + cycles
                count[ins.line] = count.get(ins.line, 0) + 1
    return {line: total[line] / count[line] for line in total if total[line]}


def pc_conflicts(program, arch: str) -> dict[int, float]:
    """Mean extra issue cycles from register-bank conflicts of each pc of an emulator
    program whose SASS has any, cached on disk by the module's PTX text as assembled, the
    kernel, the architecture and the tools. Raises :class:`~kerncast.ToolchainError` when ptxas
    or nvdisasm is missing or fails, ``ValueError`` when the program has no module."""
    from kerncast.frontend import _cache  # noqa: PLC0415 (on use: the compiler)

    if getattr(program, "module", None) is None:
        raise ValueError("register-bank conflicts need the PTX module of the program")
    key = {"rules": RULES, "arch": arch, "tools": tools_signature(),
           "ptx": _cache.digest({"text": printed_module(program.module)[0]}),
           "kernel": program.kernel.name, "pcs": len(program.items)}
    stored = _cache.load("regbanks", key)
    if stored is not None and isinstance(stored.get("pcs"), dict):
        return {int(pc): float(extra) for pc, extra in stored["pcs"].items()}
    out = _assembled_conflicts(program, arch)
    _cache.store("regbanks", key, {"pcs": {str(pc): extra for pc, extra in out.items()}})
    return out


def _assembled_conflicts(program, arch: str) -> dict[int, float]:
    text, line_of = printed_module(program.module)
    code = assemble(text, arch, name=program.kernel.name)
    by_line = line_conflicts(code.function(program.kernel.name))
    out = {}
    for pc, item in enumerate(program.items):
        if item.kind == "op":
            extra = by_line.get(line_of.get(id(item.instr), 0), 0.0)
            if extra:
                out[pc] = extra
    return out


def charge_conflicts(table: list, conflicts: dict[int, float]) -> list:
    """``table`` (the pipeline's :class:`~kerncast.sim._pipeline.Op` per pc) with each
    arithmetic pc holding its pipe for one cycle plus its conflict cycles per SASS
    instruction it stands for, or for its own issue cycles where those are longer (the
    reads fit in them)."""
    out = list(table)
    for pc, extra in conflicts.items():
        op = out[pc]
        if op.kind == K_ALU:
            out[pc] = replace(op, issue=max(op.issue, op.slots * (1.0 + extra)))
    return out

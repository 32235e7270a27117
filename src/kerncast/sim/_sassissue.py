"""Issue slots from the real SASS: how many SASS instructions each PTX instruction costs.

The pipeline issues PTX, yet the SM issues what ptxas made of it: a ``cvt`` or
``mov`` folded into its user costs nothing, address arithmetic hoisted out of a loop
runs once instead of every trip, ``logf`` or a 64-bit multiply takes several SASS
instructions, a loop ptxas unrolled drops its counter and branch from all but one
copy. :func:`kerncast.trace._sassmap.map_sass` estimates how often every SASS block
of the kernel runs in the emulated launch (it matches Nsight Compute's executed
instructions on the corpus); each SASS instruction names the PTX line it was
assembled from (``-lineinfo``). Per PTX line, the SASS instructions executed over
the PTX instructions the pipeline issues there is that line's issue cost:
:func:`pc_issue_ratios`.

:func:`charge_sass_issue` gives each pc that many scheduler slots. Its pipe is held
for its calibrated time scaled down where ptxas removed part of its executions,
never up: SASS instructions beyond the PTX one (a ``logf``'s range reduction, an
address's ``IMAD``) are not of its class, and the class's pipe is the wrong one to
charge them to. Two exceptions keep their pipe time: the integer ALU's classes
(additions, logic, moves: the calibration times PTX chains of them, and its rate
already holds what ptxas makes of them, adds spread over the ALU and FMA pipes,
shifts merged into ``LOP3``), and classes calibrated whole (a software sequence timed
as one). Memory instructions keep their load/store path cost and take their extra
SASS on the scheduler.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from kerncast.ptx import InstrClass
from kerncast.sim._machine import PIPES
from kerncast.trace import assemble, map_sass, printed_module
from kerncast.sim._pipeline import K_ALU, K_MEM

__all__ = ["charge_sass_issue", "pc_issue_ratios"]

_ALU = PIPES.index("alu")


def pc_issue_ratios(trace, arch: str, issued=None) -> dict[int, float]:
    """Per pc of the trace's program whose PTX line ran, the SASS instructions
    executed per PTX instruction issued on that line (``issued``: per pc, how often the
    pipeline issues it, predicated-off copies included; its executions by default). Raises
    :class:`~kerncast.ToolchainError` when ptxas or nvdisasm is missing or fails,
    ``ValueError`` when the trace holds no module."""
    program = getattr(trace, "program", None)
    if program is None or program.module is None:
        raise ValueError("SASS issue slots need the PTX module the trace was emulated from")
    text, line_of = printed_module(program.module)
    code = assemble(text, arch, name=program.kernel.name)
    mapped = map_sass(trace, arch=arch, code=code)
    sass: dict[int, float] = defaultdict(float)
    for function, index, count, _ in mapped.blocks:
        if count:
            for ins in code.function(function).blocks[index].instructions:
                if ins.line:
                    sass[ins.line] += count
    warp_counts = trace.pc_counts[0] if issued is None else issued
    ptx: dict[int, float] = defaultdict(float)
    lines: dict[int, int] = {}
    for pc, item in enumerate(program.items):
        line = line_of.get(id(item.instr), 0) if item.kind == "op" else 0
        if line:
            ptx[line] += float(warp_counts[pc])
            lines[pc] = line
    return {pc: sass.get(line, 0.0) / ptx[line] for pc, line in lines.items() if ptx[line]}


def charge_sass_issue(table: list, ratios: dict[int, float], program, machine) -> list:
    """``table`` with each pc issued as the SASS instructions ``ratios`` gives it (see
    the module doc for what is charged where)."""
    out = list(table)
    for pc, ratio in ratios.items():
        op = out[pc]
        item = program.items[pc]
        if op.kind == K_MEM:
            out[pc] = replace(op, slots=max(ratio, 1.0))
        elif op.kind == K_ALU and InstrClass(item.iclass).value not in machine.measured_whole:
            scale = 1.0 if op.pipe == _ALU else min(ratio, 1.0)
            out[pc] = replace(op, slots=ratio, issue=op.issue * scale)
    return out

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

Per line it also counts the SASS of each execution pipe that the pipeline models apart
from the PTX instruction's own (:data:`PIPE_OF`, the pipes of Nsight Compute's
``smsp__inst_executed_pipe_*`` counters: over six corpus kernels on an H100 the counts
of the integer ALU's SASS match those counters to the third digit):

* the integer ALU (``IADD3``, ``LOP3``, ``ISETP``, ``FSETP``, ``SHF``, ``SEL``, ``MOV``,
  ``I2FP``...): 16 lanes a scheduler on Hopper (the spec's 64 INT32 lanes an SM), two
  cycles a warp instruction (``data/probes/register_banks_h100.json``: an ``IADD3``
  chain issues 0.49 a cycle);
* the FP32 pipe pair: ``FFMA``, ``FADD``, ``FMUL`` and ``HFMA2`` take either of the two
  16-lane halves, a warp instruction a cycle between them; ``IMAD``, ``IMUL``, ``IDP``
  and ``VIADD`` only the heavy half, at the calibrated integer multiply's rate (two
  cycles on an H100), and one of the pair's cycles too.

:func:`charge_sass_issue` gives each pc that many scheduler slots, and holds each pipe for
what its SASS needs there: the integer ALU and the FP32 pair for the SASS above, which a
PTX integer instruction needs in place of its class's calibrated time (the calibration
times PTX chains, whose adds ptxas spreads over both pipes). A pc of another class (a
special function, FP64, a conversion) holds its own pipe for its calibrated time, scaled
down where ptxas removed part of its executions, never up; a conversion whose SASS is an
integer ALU instruction (``I2FP``) holds only the ALU. Classes calibrated whole (a
software sequence timed as one) keep their calibration. Memory instructions keep their
load/store path cost and take their extra SASS on the scheduler. An instruction folded
into its user's SASS takes no latency of its own (:func:`charge_sass_issue`).

:func:`read_sass` also tells where ptxas placed each PTX line's work in the SASS, so that
the pipeline issues a segment in ptxas's order rather than in a list schedule of its own
(:func:`kerncast.sim._pipeline.segment_orders`): ptxas holds back loads to reuse the
registers earlier work freed (``coulomb_potential`` loads its second sector of atoms
only after the first two atoms' arithmetic), and interleaves independent chains
(``arith_int32``'s eight hashes) so that the integer ALU and the FP32 pair's heavy half
work at once.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import NamedTuple

from kerncast.ptx import InstrClass
from kerncast.sim._machine import PIPES
from kerncast.trace import assemble, map_sass, printed_module
from kerncast.sim._pipeline import K_ALU, K_MEM

__all__ = ["PIPE_OF", "SassIssue", "SassReading", "charge_sass_issue", "pc_issue_ratios",
           "read_sass"]

_ALU, _FMA, _HEAVY = PIPES.index("alu"), PIPES.index("fma"), PIPES.index("fma_heavy")
_CTRL = PIPES.index("ctrl")
_OWN_FROM_SASS = (_ALU, _FMA)

#: SASS mnemonic (before the first dot) -> the pipe of it that the pipeline models apart
#: from the PTX instruction's class: ``alu`` (the integer ALU), ``fp32`` (either half of
#: the FP32 pair), ``heavy`` (the pair's heavy half only), ``xu`` (transcendentals and
#: conversions, the class's own pipe)
PIPE_OF = {
    **dict.fromkeys(("IADD3", "IADD", "IABS", "LOP3", "LOP", "ISETP", "FSETP", "SHF", "SHL",
                     "SHR", "SEL", "FSEL", "LEA", "IMNMX", "FMNMX", "PRMT", "PLOP3", "MOV",
                     "P2R", "R2P", "SGXT", "BMSK", "F2FP", "I2FP", "VABSDIFF", "ISCADD"),
                    "alu"),
    **dict.fromkeys(("FFMA", "FADD", "FMUL", "HFMA2", "HADD2", "HMUL2", "FSWZADD"), "fp32"),
    **dict.fromkeys(("IMAD", "IMUL", "IDP", "IDP4A", "VIADD"), "heavy"),
    **dict.fromkeys(("MUFU", "I2F", "F2I", "F2F", "FRND", "POPC", "FLO", "BREV"), "xu"),
}


class SassIssue(NamedTuple):
    """What one execution of a PTX instruction issues as SASS: scheduler slots, and the
    SASS of each pipe in :data:`PIPE_OF` (``0.5`` where ptxas keeps one copy of two)."""

    slots: float
    alu: float = 0.0
    fp32: float = 0.0
    heavy: float = 0.0
    xu: float = 0.0


class SassReading(NamedTuple):
    """What the SASS says of each pc of a program: what one execution issues
    (:func:`pc_issue_ratios`) and where ptxas placed it (:func:`read_sass`)."""

    issue: dict[int, SassIssue]
    places: dict[int, int]


def pc_issue_ratios(trace, arch: str, issued=None) -> dict[int, SassIssue]:
    """Per pc of the trace's program whose PTX line ran, the SASS instructions executed
    per PTX instruction issued on that line, in all and by pipe (``issued``: per pc, how
    often the pipeline issues it, predicated-off copies included; its executions by
    default). Raises :class:`~kerncast.ToolchainError` when ptxas or nvdisasm is missing
    or fails, ``ValueError`` when the trace holds no module."""
    return read_sass(trace, arch, issued).issue


def read_sass(trace, arch: str, issued=None) -> SassReading:
    """:func:`pc_issue_ratios`, and per pc the offset where ptxas placed its work: the
    first SASS instruction of its line in the most executed SASS block holding the line
    (a loop's body, not its peeled or remainder copies), constant loads and moves aside
    (ptxas hoists and rematerialises them wherever a register is free) unless the line
    has nothing else (an ``ld.const``'s ``LDC``). A pc whose line has no SASS of its own
    in the code that ran (folded into another line's instruction, or hoisted out of a
    loop) has no place. Raises as :func:`pc_issue_ratios`."""
    program = getattr(trace, "program", None)
    if program is None or program.module is None:
        raise ValueError("SASS issue slots need the PTX module the trace was emulated from")
    text, line_of = printed_module(program.module)
    code = assemble(text, arch, name=program.kernel.name)
    mapped = map_sass(trace, arch=arch, code=code)
    sass: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    placed: dict[int, tuple[float, bool, int]] = {}  # line -> (count, fixed, offset)
    for function, index, count, _ in mapped.blocks:
        if count:
            for ins in code.function(function).blocks[index].instructions:
                if ins.line:
                    _count_pipes(sass[ins.line], ins.base, count)
                    _place(placed, ins, count)
    warp_counts = trace.pc_counts[0] if issued is None else issued
    ptx: dict[int, float] = defaultdict(float)
    lines: dict[int, int] = {}
    for pc, item in enumerate(program.items):
        line = line_of.get(id(item.instr), 0) if item.kind == "op" else 0
        if line:
            ptx[line] += float(warp_counts[pc])
            lines[pc] = line
    issue = {pc: _per_execution(sass.get(line), ptx[line]) for pc, line in lines.items()
             if ptx[line]}
    places = {pc: placed[line][2] for pc, line in lines.items() if line in placed}
    return SassReading(issue, places)


# SASS that ptxas hoists, sinks or rematerialises wherever a register is free, so its
# position says nothing of where the PTX line's work is scheduled
_UNPLACED = frozenset(("LDC", "ULDC", "S2R", "S2UR", "CS2R", "MOV", "UMOV", "BSSY", "BSYNC",
                       "NOP", "EXIT", "RET", "PLOP3", "BRA"))


def _count_pipes(per_pipe: dict[str, float], base: str, count: float) -> None:
    per_pipe["slots"] += count
    pipe = PIPE_OF.get(base)
    if pipe:
        per_pipe[pipe] += count


def _place(placed: dict[int, tuple[float, bool, int]], ins, count: float) -> None:
    """Keep ``ins`` as its line's place if the line has none yet, or one in a block that
    runs less often, or only a hoistable one (:data:`_UNPLACED`) in the same block: a
    line's place is its first SASS instruction that ptxas does not move freely, the
    first it moves freely where that is all the line has (an ``ld.const``'s ``LDC``)."""
    if ins.inherited:
        return
    fixed = ins.base not in _UNPLACED
    kept = placed.get(ins.line)
    if kept is None or count > kept[0] or (count == kept[0] and fixed and not kept[1]):
        placed[ins.line] = (count, fixed, ins.offset)


def _per_execution(counts: dict[str, float] | None, executions: float) -> SassIssue:
    if not counts:
        return SassIssue(0.0)
    return SassIssue(*(counts.get(field, 0.0) / executions for field in SassIssue._fields))


def charge_sass_issue(table: list, issue: dict[int, SassIssue], program, machine) -> list:
    """``table`` with each pc issued as the SASS ``issue`` gives it (see the module doc
    for what is charged where)."""
    out = list(table)
    for pc, sass in issue.items():
        op = out[pc]
        cls = InstrClass(program.items[pc].iclass)
        if op.kind == K_MEM:
            out[pc] = replace(op, slots=max(sass.slots, 1.0))
        elif op.kind == K_ALU and cls.value not in machine.measured_whole:
            out[pc] = _held(op, cls, sass, machine)
    return _folded(out, issue)


def _folded(table: list, issue: dict[int, SassIssue]) -> list:
    """``table`` with the instructions ptxas folded into their users' SASS (a shift
    into ``LEA.HI``, a multiply into ``IMAD``, a ``cvt`` into an operand: no SASS on
    their line) taking no latency of their own: the user's instruction does their work
    in its own latency. Not where an issued instruction reads the same registers: that
    one computed the value beside its own (``mul.lo`` and ``mul.hi`` of one pair are one
    ``IMAD.WIDE``), which arrives with its latency."""
    computed = {frozenset(table[pc].srcs) for pc, sass in issue.items()
                if sass.slots and table[pc].kind == K_ALU}
    out = list(table)
    for pc, sass in issue.items():
        op = out[pc]
        if op.kind == K_ALU and not sass.slots and frozenset(op.srcs) not in computed:
            out[pc] = replace(op, latency=0.0)
    return out


def _held(op, cls: InstrClass, sass: SassIssue, machine):
    """``op`` holding the pipes of its SASS (see the module doc)."""
    held = {_ALU: sass.alu * machine.alu_cycles,
            _FMA: sass.fp32 + sass.heavy,
            _HEAVY: sass.heavy * machine.heavy_cycles}
    if op.pipe in _OWN_FROM_SASS:
        # the busiest pipe of its SASS is the instruction's own (none: folded away)
        pipe = max(held, key=held.__getitem__) if any(held.values()) else _CTRL
        issue = held.pop(pipe, 0.0)
    else:
        pipe = op.pipe
        scale = sass.xu if cls is InstrClass.CONVERSION else sass.slots
        issue = op.issue * min(scale, 1.0)
    also = tuple((p, cycles) for p, cycles in held.items() if cycles > 0.0)
    return replace(op, pipe=pipe, slots=sass.slots, issue=issue, also=also)

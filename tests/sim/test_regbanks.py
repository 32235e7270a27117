"""Register-bank conflicts: the conflict count of SASS instructions, their mean per PTX
line, what the pipeline charges for them, and the corpus kernel whose loop has them."""

from __future__ import annotations

import pytest

from kerncast.sim._pipeline import K_ALU, K_MEM, Op
from kerncast.sim._regbanks import charge_conflicts, conflict_cycles, line_conflicts
from kerncast.trace import _sasscode
from kerncast.trace._sasscode import parse_disassembly

needs_tools = pytest.mark.skipif(bool(_sasscode.missing_tools()),
                                 reason="needs ptxas and nvdisasm")


@pytest.mark.parametrize("before, text, cycles", [
    # corpus arith_mixed's loop on an H100: R4 and R2 are both even
    ([], "FFMA R4, R4, R2, R3", 1),
    # a uniform register and one odd register beside the chain's even one
    ([], "FFMA R4, R4, UR4, R3", 0),
    # three even registers: two extra reads
    ([], "FFMA R4, R2, R6, R8", 2),
    # two chains (the probe's vector_ilp2): the reuse cache serves R0 and R3 to the second
    # FFMA, the first reads R0 and R4 again (the second read R0 without keeping it)
    (["FFMA R4, R0.reuse, R4, R3.reuse"], "FFMA R6, R0, R6, R3.reuse", 0),
    (["FFMA R4, R0.reuse, R4, R3.reuse", "FFMA R6, R0, R6, R3.reuse"],
     "FFMA R4, R0.reuse, R4, R3.reuse", 1),
    # a cached register in another slot is read again
    (["FFMA R4, R0.reuse, R4, R3.reuse"], "FFMA R6, R6, R0, R3", 1),
    # corpus arith_fp32 (8 chains): the loop's ISETP between does not touch the FFMAs'
    # reuse cache, so b and c still hold R16 and R17
    (["FFMA R21, R21, R16.reuse, R17.reuse", "ISETP.NE.AND P6, PT, R12, RZ, PT"],
     "FFMA R22, R22, R16, R17", 0),
    # ... an FFMA reading R13 through slot b in between would have taken R16's place
    (["FFMA R21, R21, R16.reuse, R17.reuse", "FFMA R12, R12, R13, R17.reuse"],
     "FFMA R22, R22, R16, R17", 1),
    # RZ and immediates read nothing; modifiers are stripped
    ([], "FADD R2, -R4, R6", 1),
    ([], "FADD R2, R2, |R3|", 0),
    ([], "FFMA R2, R4, RZ, 1.5", 0),
    # the integer pipe reads its operands over its two cycles: not charged (the probe's
    # int_vector: IADD3 R7, R4, R0, R7 at the rate of the uniform chain)
    ([], "IADD3 R7, R4, R0, R7", 0),
    ([], "LOP3.LUT P6, R27, R14, R16, RZ, 0xc0, !PT", 0),
    # memory and wide instructions are not charged
    ([], "LDG.E R4, desc[UR4][R2.64]", 0),
    ([], "DFMA R2, R4, R6, R8", 0),
])
def test_conflict_cycles(before, text, cycles):
    cache: dict[int, str] = {}
    for earlier in before:
        conflict_cycles(earlier, cache)
    assert conflict_cycles(text, cache) == cycles


def test_line_conflicts_are_means_over_the_lines_arithmetic():
    """Line 10: one FFMA of two in conflict (the hoisted constant load is not counted);
    line 11 has none and is left out."""
    sass = """
        .section .text.k,"ax",@progbits
        .type k,@function
k:
        //## File "m.ptx", line 10
        /*0000*/                   LDC.64 R2, c[0x0][0x228] ;
        /*0010*/                   FFMA R4, R4, R2, R3 ;
        /*0020*/                   FFMA R4, R4, UR4, R3 ;
        //## File "m.ptx", line 11
        /*0030*/                   FADD R5, R5, R6 ;
        //## File "m.ptx", line 12
        /*0040*/                   EXIT ;
"""
    func = parse_disassembly(sass).function("k")
    assert line_conflicts(func) == {10: 0.5}


def test_conflicts_hold_the_pipe_of_single_cycle_instructions_only():
    ffma = Op(K_ALU, 1, 1.0, 1, 4.0, (0, 1, 2), (0,))
    imad = Op(K_ALU, 1, 2.0, 1, 4.0, (0, 1, 2), (0,))
    load = Op(K_MEM, 5, 1.0, 1, 0.0, (3,), (4,))
    out = charge_conflicts([ffma, imad, load], {0: 1.0, 1: 1.0, 2: 1.0})
    assert out[0].issue == 2.0 and out[0].slots == 1
    assert out[1] == imad  # a two-cycle pipe reads its operands over its two cycles
    assert out[2] == load


@needs_tools
@pytest.mark.toolchain
def test_arith_mixed_loop_conflicts_on_every_fma():
    from kerncast.corpus import get_kernel
    from kerncast.sim import cached_program, cached_unit
    from kerncast.sim._regbanks import pc_conflicts

    kernel = get_kernel("arith_mixed")
    tu, module = cached_unit(kernel.instance(kernel.launch("small"))[0], "h100")
    program = cached_program(module, tu.kernel(kernel.entry).entry)
    conflicts = pc_conflicts(program, "sm_90")
    fmas = [pc for pc, item in enumerate(program.items)
            if item.kind == "op" and item.instr.opcode == "fma"]
    assert fmas and {pc for pc in fmas if conflicts.get(pc) == 1.0} == set(fmas)


@needs_tools
@pytest.mark.toolchain
def test_predictions_say_where_the_conflicts_come_from(monkeypatch):
    from kerncast.corpus import get_kernel
    from kerncast.sim import predict_launch

    kernel = get_kernel("arith_mixed")
    config = kernel.launch("small")
    found = predict_launch(*kernel.instance(config), "h100").based_on["register_bank_conflicts"]
    assert found.startswith("from the SASS (ptxas -arch=sm_90)")
    # without nvdisasm the model goes on without them, and says so
    monkeypatch.setattr(_sasscode, "missing_tools", lambda: _sasscode.NO_NVDISASM)
    without = predict_launch(*kernel.instance(config), "h100")
    assert without.based_on["register_bank_conflicts"] == "not modelled: " + _sasscode.NO_NVDISASM
    assert without.seconds > 0

"""Printer round trips: parse -> to_ptx -> parse gives the same program; ptxas accepts it."""

from __future__ import annotations

import pytest

from kerncast.ptx import (
    Imm, Instruction, InstrClass, Reg, float_imm, format_instruction, parse, to_ptx,
)
from tests.ptx._util import PTX_FILES, kernel, ptxas_accepts


def _same_program(a, b) -> None:
    assert (a.version, a.targets, a.address_size) == (b.version, b.targets, b.address_size)
    assert a.variables == b.variables
    assert [f.name for f in a.functions] == [f.name for f in b.functions]
    for fa, fb in zip(a.functions, b.functions):
        assert fa.instructions == fb.instructions, fa.name
        assert (fa.params, fa.returns, fa.is_entry, fa.linkage) == \
            (fb.params, fb.returns, fb.is_entry, fb.linkage)
        assert dict(fa.registers) == dict(fb.registers)
        assert fa.variables == fb.variables and dict(fa.labels) == dict(fb.labels)
        assert (fa.maxntid, fa.reqntid, fa.minnctapersm, fa.maxnreg, fa.pragmas) == \
            (fb.maxntid, fb.reqntid, fb.minnctapersm, fb.maxnreg, fb.pragmas)


def test_committed_inputs_exist():
    names = {p.name for p in PTX_FILES}
    assert {"stress_sm90.ptx", "stress_sm80.ptx", "stress_cl_sm80.ptx",
            "handwritten_sm90.ptx"} <= names


@pytest.mark.parametrize("path", PTX_FILES, ids=lambda p: p.name)
def test_round_trip_is_instruction_for_instruction(path):
    module = parse(path.read_text(), filename=path.name)
    printed = to_ptx(module)
    again = parse(printed)
    _same_program(module, again)
    assert to_ptx(again) == printed  # printing is a fixed point


@pytest.mark.toolchain
@pytest.mark.parametrize("path", PTX_FILES, ids=lambda p: p.name)
def test_ptxas_accepts_the_printed_module(path, tmp_path):
    result = ptxas_accepts(to_ptx(parse(path.read_text())), tmp_path)
    assert result.returncode == 0, result.stderr


def test_instruction_text():
    func = parse(kernel(".reg .pred %p1;\n.reg .b32 %r<3>;\n@!%p1 add.s32 %r1, %r2, -4;\n"
                        "ret;")).function("k")
    add, ret = func.instructions
    assert format_instruction(add) == "@!%p1 add.s32 \t%r1, %r2, -4;"
    assert str(add) == "@!%p1 add.s32 %r1, %r2, -4;" and str(ret) == "ret;"


def test_hand_built_instructions_print():
    instr = Instruction("mov", ("f32",), (Reg("%f1"), float_imm(1.0)), types=("f32",),
                        iclass=InstrClass.MOVE)
    assert str(instr) == "mov.f32 %f1, 0f3F800000;"
    assert str(Imm(5, "u64")) == "5U" and str(float_imm(-2.0, "f64")) == "0dC000000000000000"


def test_negated_hex_float_prints_as_a_literal_ptxas_accepts(tmp_path):
    text = kernel(".reg .f32 %f1;\nmov.f32 %f1, -0f3F800000;\nret;")
    module = parse(text)
    assert module.function("k").instructions[0].operands[1].value == -1.0
    printed = to_ptx(module)
    assert "0fBF800000" in printed
    result = ptxas_accepts(printed, tmp_path)
    assert result.returncode == 0, result.stderr


def test_renamed_scoped_names_print_consistently(tmp_path):
    text = kernel("""
    .reg .b32 %r<2>;
    { .reg .b32 %r1; mov.u32 %r1, 1; L: add.u32 %r1, %r1, 1; }
    { .reg .b64 %r1; mov.u64 %r1, 2; L: }
    ret;""")
    printed = to_ptx(parse(text))
    assert ".reg .b32 %r1$1;" in printed and ".reg .b64 %r1$2;" in printed
    assert "L$1:" in printed
    result = ptxas_accepts(printed, tmp_path)
    assert result.returncode == 0, result.stderr

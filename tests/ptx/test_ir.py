"""IR objects: immutability, equality that ignores positions, pickling, helpers."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys

import pytest

from kerncast import InputError
from kerncast.ptx import (
    Imm, Instruction, InstrClass, Reg, SymbolRef, float_imm, parse, type_size,
)
from tests.ptx._util import DATA, HEADER, kernel


def test_instructions_are_frozen_and_hashable():
    instr = parse(kernel(".reg .b32 %r1;\nmov.u32 %r1, 1;\nret;")).function("k").instructions[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        instr.opcode = "add"  # type: ignore[misc]
    assert hash(instr) == hash(dataclasses.replace(instr, line=99, column=7))
    assert instr == dataclasses.replace(instr, line=99)
    assert instr != dataclasses.replace(instr, operands=(Reg("%r1"), Imm(2)))


def test_same_program_with_other_layout_is_equal():
    a = parse(kernel(".reg .b32 %r1;\nmov.u32 %r1, 0x10;\nret;")).function("k")
    b = parse(kernel("\n\n  .reg .b32 %r1;   mov.u32 %r1, 16;    // same\n ret;")).function("k")
    assert a.instructions == b.instructions


def test_float_immediates_compare_by_bits():
    assert Imm(1.0, "f32") == float_imm(1.0) == Imm(1.0, "f32", 0x3F800000)
    assert Imm(1.0, "f32") != Imm(1.0, "f64")
    nan = Imm(float("nan"), "f32", 0x7FC00000)
    assert nan == Imm(float("nan"), "f32", 0x7FC00000) and hash(nan) == hash(nan)
    assert Imm(-1) != Imm(-1, "u64")


def test_modules_pickle():
    module = parse((DATA / "stress_sm90.ptx").read_text())
    again = pickle.loads(pickle.dumps(module))
    assert [f.instructions for f in again.functions] == [f.instructions for f in module.functions]


def test_variable_helpers():
    module = parse(HEADER + ".global .align 4 .b8 t[2][2] = {{1, 2}, {3}};\n"
                   ".global .u64 p = generic(t);\n.entry k() { ret; }")
    t = module.variable("t")
    assert [i.value for i in t.flat_init] == [1, 2, 3] and t.size == 4
    assert module.variable("p").flat_init == (SymbolRef("t", 0, True),)
    with pytest.raises(InputError, match="no variable 'q'"):
        module.variable("q")


def test_function_lookups():
    func = parse(kernel(".shared .align 4 .b8 s[8];\nret;", params=".param .u32 n")).function("k")
    assert func.param("n").size == 4 and func.variable("s").size == 8
    with pytest.raises(InputError, match="has no parameter 'x'; it has n"):
        func.param("x")
    assert type_size("f16x2") == 4 and type_size("b128") == 16


def test_import_is_light():
    code = ("import sys, kerncast.ptx\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'pandas', 'scipy', 'sklearn', 'matplotlib', 'pyopencl', 'cupy'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(DATA.parents[2] / "src")})
    assert out.stdout.strip() == ""


def test_built_instructions_equal_parsed_ones():
    func = parse(kernel(".reg .f32 %f<3>;\nadd.rn.ftz.f32 %f1, %f2, 0f3F800000;\nret;"))\
        .function("k")
    built = Instruction.build("add", ("rn", "ftz", "f32"),
                              (Reg("%f1"), Reg("%f2"), float_imm(1.0)))
    assert built == func.instructions[0]
    assert built.iclass is InstrClass.FP32 and built.rounding == "rn"


def test_kernel_lookup():
    module = parse(HEADER + ".func f() { ret; }\n.entry a() { ret; }\n.entry b() { ret; }")
    assert module.kernel("a").name == "a"
    with pytest.raises(InputError, match="has 2 kernels \\(a, b\\); name the one you mean"):
        module.kernel()
    with pytest.raises(InputError, match="f is a device function, not a kernel"):
        module.kernel("f")
    assert parse(kernel("ret;")).kernel().name == "k"
    with pytest.raises(InputError, match="no kernel"):
        parse(HEADER + ".func f() { ret; }").kernel()

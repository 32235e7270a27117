"""Instruction classes: every class of the vocabulary on real instructions."""

from __future__ import annotations

import pytest

from kerncast.ptx import InstrClass, instruction_class, parse, static_mix
from tests.ptx._util import kernel

DECLS = """
    .reg .pred %p<4>;
    .reg .b16 %h<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .reg .f32 %f<9>;
    .reg .f64 %fd<8>;
    .shared .align 4 .b8 sh[64];
"""

CASES = [
    ("add.s32 %r1, %r2, %r3;", "int"),
    ("add.s64 %rd1, %rd2, %rd3;", "int"),
    ("shl.b32 %r1, %r2, 3;", "int"),
    ("setp.lt.s32 %p1, %r1, %r2;", "int"),
    ("selp.f32 %f1, %f2, %f3, %p1;", "int"),
    ("min.u32 %r1, %r2, %r3;", "int"),
    ("lop3.b32 %r1, %r2, %r3, %r4, 0x96;", "int"),
    ("mul.lo.s32 %r1, %r2, %r3;", "int_mul"),
    ("mad.wide.u32 %rd1, %r2, %r3, %rd4;", "int_mul"),
    ("mul.hi.u64 %rd1, %rd2, %rd3;", "int_mul"),
    ("div.s32 %r1, %r2, %r3;", "int_div"),
    ("rem.u64 %rd1, %rd2, %rd3;", "int_div"),
    ("fma.rn.f32 %f1, %f2, %f3, %f4;", "fp32"),
    ("setp.geu.f32 %p1, %f1, %f2;", "fp32"),
    ("abs.f32 %f1, %f2;", "fp32"),
    ("div.rn.f32 %f1, %f2, %f3;", "fp32_div"),
    ("sqrt.rn.f32 %f1, %f2;", "fp32_div"),
    ("rcp.rn.f32 %f1, %f2;", "fp32_div"),
    ("add.f64 %fd1, %fd2, %fd3;", "fp64"),
    ("div.rn.f64 %fd1, %fd2, %fd3;", "fp64_div"),
    ("sqrt.rn.f64 %fd1, %fd2;", "fp64_div"),
    ("fma.rn.f16x2 %r1, %r2, %r3, %r4;", "fp16"),
    ("add.bf16 %h1, %h2, %h3;", "fp16"),
    ("sin.approx.f32 %f1, %f2;", "sfu"),
    ("ex2.approx.ftz.f32 %f1, %f2;", "sfu"),
    ("rsqrt.approx.f32 %f1, %f2;", "sfu"),
    ("rcp.approx.ftz.f64 %fd1, %fd2;", "sfu"),
    ("sqrt.approx.f32 %f1, %f2;", "sfu"),
    ("div.full.f32 %f1, %f2, %f3;", "sfu"),
    ("cvt.rn.f32.s32 %f1, %r1;", "conversion"),
    ("cvta.to.global.u64 %rd1, %rd2;", "conversion"),
    ("mov.u32 %r1, %tid.x;", "move"),
    ("ld.global.nc.f32 %f1, [%rd1];", "ld_global"),
    ("ldu.global.u32 %r1, [%rd1];", "ld_global"),
    ("st.global.v2.f32 [%rd1], {%f1, %f2};", "st_global"),
    ("ld.shared.u32 %r1, [sh];", "ld_shared"),
    ("st.shared::cta.u32 [sh], %r1;", "st_shared"),
    ("ld.local.u32 %r1, [%rd1];", "ld_local"),
    ("st.local.u32 [%rd1], %r1;", "st_local"),
    ("ld.const.f32 %f1, [%rd1];", "ld_const"),
    ("ld.param.u32 %r1, [n];", "ld_param"),
    ("ld.u32 %r1, [%rd1];", "ld_generic"),
    ("st.f32 [%rd1], %f1;", "st_generic"),
    ("atom.global.add.f32 %f1, [%rd1], %f2;", "atomic_global"),
    ("red.global.add.u32 [%rd1], %r1;", "atomic_global"),
    ("atom.shared.cas.b32 %r1, [sh], %r2, %r3;", "atomic_shared"),
    ("atom.add.u32 %r1, [%rd1], 1;", "atomic_generic"),
    ("bar.sync 0;", "barrier"),
    ("barrier.sync.aligned 0;", "barrier"),
    ("membar.gl;", "fence"),
    ("fence.acq_rel.gpu;", "fence"),
    ("shfl.sync.down.b32 %r1, %r2, 1, 31, -1;", "warp"),
    ("vote.sync.ballot.b32 %r1, %p1, -1;", "warp"),
    ("match.any.sync.b32 %r1, %r2, -1;", "warp"),
    ("activemask.b32 %r1;", "warp"),
    ("redux.sync.add.u32 %r1, %r2, -1;", "warp"),
    ("bar.warp.sync -1;", "warp"),
    ("tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd1, {%r1}];", "texture"),
    ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2}, "
     "{%r3}, {%f5, %f6, %f7, %f8};", "tensor"),
    ("st.param.b32 [n], %r1;", "st_param"),
    ("nanosleep.u32 100;", "other"),
    ("prefetch.global.L2 [%rd1];", "other"),
    ("ret;", "control"),
    ("exit;", "control"),
    ("trap;", "control"),
]


@pytest.mark.parametrize("line, expected", CASES)
def test_instruction_class(line, expected):
    func = parse(kernel(DECLS + line + "\nret;")).function("k")
    instr = func.instructions[0]
    assert instruction_class(instr) == expected == instr.iclass.value
    assert instr.iclass is InstrClass(expected)


def test_branch_class():
    func = parse(kernel(DECLS + "@%p1 bra L;\nL: ret;")).function("k")
    assert func.instructions[0].iclass is InstrClass.BRANCH


def test_every_class_is_documented_and_used_in_the_cases():
    used = {expected for _, expected in CASES} | {"branch"}
    assert used == {cls.value for cls in InstrClass}
    for cls in InstrClass:
        assert str(cls) == cls.value


def test_static_mix_counts_by_class_in_enum_order():
    body = DECLS + """
    ld.param.u32 %r1, [n];
    add.s32 %r2, %r1, 1;
    add.s32 %r3, %r2, 1;
    fma.rn.f32 %f1, %f2, %f3, %f4;
    ret;"""
    mix = static_mix(parse(kernel(body)).function("k"))
    assert mix == {InstrClass.INT: 2, InstrClass.FP32: 1, InstrClass.LD_PARAM: 1,
                   InstrClass.CONTROL: 1}
    assert list(mix) == [InstrClass.INT, InstrClass.FP32, InstrClass.LD_PARAM,
                         InstrClass.CONTROL]

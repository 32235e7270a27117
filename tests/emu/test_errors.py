"""Errors: faults name kernel, line, instruction, block, thread, address and buffer;
deadlocks name the barrier; endless loops hit the step budget; unsupported PTX and
bad arguments are InputErrors raised before anything runs."""

from pathlib import Path

import numpy as np
import pytest

from kerncast import InputError
from kerncast.emu import (
    Deadlock, KernelTrap, MemoryFault, StepBudgetExceeded, UnsupportedInstruction, emulate,
)
from kerncast.ptx import parse
from tests.emu.ptxkit import HEADER, cuda_module

pytestmark = pytest.mark.toolchain


@pytest.fixture(scope="module")
def mod():
    return cuda_module((Path(__file__).parent / "kernels.cu").read_text())


def _ptx(body: str, params: str = ".param .u64 out", regs: str = "") -> str:
    return (f"{HEADER}.visible .entry k({params})\n{{\n.reg .u32 %r<8>;\n.reg .u64 %rd<8>;\n"
            f".reg .pred %p<4>;\n.reg .f32 %f<4>;\n{regs}\n{body}\nret;\n}}\n")


def test_out_of_bounds_read_names_everything(mod):
    x, out = np.zeros(100, np.float32), np.zeros(128, np.float32)
    with pytest.raises(MemoryFault) as info:
        emulate(mod, ((2,), (64,)), [x, out, 0], entry="oob")
    msg = str(info.value)
    assert "kernel oob" in msg and "out-of-bounds 4-byte access" in msg
    assert "0 bytes past the end of buffer oob_param_0 (400 bytes" in msg
    assert "PTX line" in msg and "ld.global.f32" in msg
    assert "block (1, 0, 0), thread (36, 0, 0)" in msg
    assert info.value.block == (1, 0, 0) and info.value.thread == (36, 0, 0)
    assert info.value.address == info.value.address and isinstance(info.value, InputError)


def test_misaligned_access():
    ptx = _ptx("ld.param.u64 %rd1, [out];\nadd.u64 %rd2, %rd1, 2;\nst.global.u32 [%rd2], %r1;")
    with pytest.raises(MemoryFault, match=r"misaligned 4-byte access to global address 0x7"
                                          r"[0-9a-f]+2; inside buffer out"):
        emulate(parse(ptx), ((1,), (32,)), [np.zeros(8, np.uint32)])


def test_null_pointer_and_shared_overflow():
    ptx = _ptx("mov.u64 %rd1, 0;\nld.global.u32 %r1, [%rd1];")
    with pytest.raises(MemoryFault, match="global address 0x0; .* before buffer out"):
        emulate(parse(ptx), ((1,), (32,)), [np.zeros(8, np.uint32)])
    ptx = _ptx("mov.u32 %r1, buf;\nmov.u32 %r2, %tid.x;\nshl.b32 %r2, %r2, 2;\n"
               "add.u32 %r1, %r1, %r2;\nst.shared.u32 [%r1], %r2;",
               regs=".shared .align 4 .b8 buf[64];")
    with pytest.raises(MemoryFault, match=r"shared address 0x40 .*thread \(16, 0, 0\)"):
        emulate(parse(ptx), ((1,), (32,)), [np.zeros(8, np.uint32)])


def test_deadlock_names_the_barrier():
    ptx = _ptx("mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;\n@%p1 bra A;\n"
               "bar.sync 2, 64;\nbra B;\nA:\nbar.sync 1, 64;\nB:")
    with pytest.raises(Deadlock) as info:
        emulate(parse(ptx), ((1,), (64,)), [np.zeros(1, np.uint32)])
    msg = str(info.value)
    assert "kernel k deadlocked: block (0, 0, 0) waits at barrier" in msg
    assert "'bar.sync" in msg and "PTX line" in msg and "1 of 2 warps arrived" in msg


def test_barrier_count_never_reached_is_a_deadlock():
    ptx = _ptx("bar.sync 0, 128;")
    with pytest.raises(Deadlock, match="1 of 4 warps arrived"):
        emulate(parse(ptx), ((1,), (32,)), [np.zeros(1, np.uint32)])


def test_endless_loop_hits_the_step_budget(mod):
    with pytest.raises(StepBudgetExceeded, match=r"kernel spin did not finish within 5000 "
                                                 r"warp-instruction steps \(an endless loop"):
        emulate(mod, ((1,), (32,)), [np.zeros(1, np.int32)], entry="spin", step_budget=5000)


def test_a_peek_stops_at_the_step_budget_without_failing(mod):
    res = emulate(mod, ((1,), (32,)), [np.zeros(1, np.int32)], entry="spin", step_budget=5000,
                  memory_budget=10**6, stop_when_traced=True)
    assert 5000 < res.steps <= 5100


def test_blocks_past_their_own_budget_are_stopped_and_the_others_finish():
    # block b loops 100 * b times: with 1,000 steps each, blocks 0-2 finish, 3 and 5 do not
    body = ("mov.u32 %r1, %ctaid.x;\nmul.lo.u32 %r1, %r1, 100;\nmov.u32 %r2, 0;\nLOOP:\n"
            "setp.ge.u32 %p1, %r2, %r1;\n@%p1 bra DONE;\nadd.u32 %r2, %r2, 1;\nbra LOOP;\n"
            "DONE:\nld.param.u64 %rd1, [out];\ncvta.to.global.u64 %rd1, %rd1;\n"
            "mul.wide.u32 %rd2, %r1, 4;\nadd.u64 %rd1, %rd1, %rd2;\nst.global.u32 [%rd1], %r2;")
    out = np.zeros(600, np.uint32)
    res = emulate(parse(_ptx(body)), ((6,), (32,)), [out], blocks=[0, 1, 2, 3, 5],
                  block_step_budget=1000)
    assert res.over_budget == [3, 5]
    done = res.output("out")
    assert [done[100 * b] for b in (0, 1, 2)] == [0, 100, 200]
    alone = emulate(parse(_ptx(body)), ((6,), (32,)), [out], blocks=[3], block_step_budget=1000)
    assert alone.over_budget == [3]
    assert 1000 < alone.steps <= 1010


def test_trap():
    ptx = _ptx("mov.u32 %r1, %tid.x;\nsetp.eq.u32 %p1, %r1, 5;\n@%p1 trap;")
    with pytest.raises(KernelTrap, match=r"executed trap at PTX line .*thread \(5, 0, 0\)"):
        emulate(parse(ptx), ((1,), (32,)), [np.zeros(1, np.uint32)])


def test_unsupported_instruction_is_reported_before_running():
    ptx = _ptx("tex.1d.v4.f32.s32 {%f0, %f1, %f2, %f3}, [tex0, {%r1}];",
               regs=".reg .f32 %g;")
    text = ptx.replace(".visible .entry", ".global .texref tex0;\n.visible .entry")
    with pytest.raises(UnsupportedInstruction, match=r"PTX line \d+: 'tex.1d.v4.f32.s32' is not "
                                                      r"supported by the emulator"):
        emulate(parse(text), ((1,), (32,)), [np.zeros(1, np.uint32)], step_budget=1)


def test_recursion_is_unsupported():
    text = (f"{HEADER}.func (.param .b32 r) f(.param .b32 a)\n{{\n.reg .b32 %x;\n"
            "ld.param.b32 %x, [a];\n{\n.param .b32 p;\n.param .b32 q;\nst.param.b32 [p], %x;\n"
            "call.uni (q), f, (p);\n}\nst.param.b32 [r], %x;\nret;\n}\n"
            ".visible .entry k(.param .u64 out)\n{\n.reg .b32 %y;\n{\n.param .b32 p;\n"
            ".param .b32 q;\nst.param.b32 [p], %y;\ncall.uni (q), f, (p);\n}\nret;\n}\n")
    with pytest.raises(UnsupportedInstruction, match=r"recursive call of f \(k -> f -> f\)"):
        emulate(parse(text), ((1,), (32,)), [np.zeros(1, np.uint32)])


@pytest.mark.parametrize("args,pattern", [
    ([np.zeros(4, np.float32)], r"kernel oob takes 3 arguments \(oob_param_0, oob_param_1, "
                                r"oob_param_2\), got 1"),
    ({"x": 1}, "kernel oob has no parameter 'x'; its parameters are oob_param_0"),
    ([np.zeros(4), np.zeros(4), 1.5], r"integer parameter \(.u32\) but got the float 1.5"),
    ([np.zeros(4), np.zeros(4), np.zeros(3)], "argument oob_param_2 is an array but parameter"),
    ([np.zeros(4), np.zeros(4), 2**40], r"does not fit the .u32 parameter"),
    ([np.zeros(4), np.zeros(4), "7"], r"argument oob_param_2 \(.u32\) needs an integer"),
])
def test_bad_arguments(mod, args, pattern):
    with pytest.raises(InputError, match=pattern):
        emulate(mod, ((1,), (32,)), args, entry="oob")


@pytest.mark.parametrize("launch,pattern", [
    (((1,), (2048,)), "block size 2048 exceeds the limit of 1024 threads per block"),
    (((0,), (32,)), "every grid dimension must be at least 1"),
    (((1, 1, 1, 1), (32,)), "the grid has 4 dimensions"),
    ("big", "cannot read a launch"),
])
def test_bad_launches(mod, launch, pattern):
    with pytest.raises(InputError, match=pattern):
        emulate(mod, launch, [np.zeros(4), np.zeros(4), 1], entry="oob")


def test_negative_int_for_a_u32_parameter_wraps(mod):
    x, out = np.arange(256, dtype=np.float32), np.zeros(64, np.float32)
    r = emulate(mod, ((1,), (64,)), [x, out, -0], entry="oob")
    assert r.outputs["oob_param_1"].tolist() == x[:64].tolist()
    with pytest.raises(MemoryFault, match="bytes before buffer oob_param_0"):
        emulate(mod, ((1,), (64,)), [x, out, -100], entry="oob")


def test_module_and_entry_errors(mod):
    with pytest.raises(InputError, match="has 20 kernels"):
        emulate(mod, ((1,), (32,)), [])
    with pytest.raises(InputError, match="no function 'nope'"):
        emulate(mod, ((1,), (32,)), [], entry="nope")
    with pytest.raises(InputError, match="block index 5 is outside the grid of 1 blocks"):
        emulate(mod, ((1,), (32,)), [np.zeros(4), np.zeros(4), 0], entry="oob", blocks=[5])

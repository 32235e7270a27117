"""Trace-only emulation (``values="needed"``): the instructions whose results no
branch, guard, barrier or address depends on are not computed, yet the trace is
the full run's, faults still fire, and values that reach an address through memory
are still computed."""

import numpy as np
import pytest

from kerncast import InputError
from kerncast.emu import MemoryFault, UnsupportedInstruction, emulate, emulate_corpus
from kerncast.emu._program import build_program
from kerncast.emu._slice import ADDRESSES, FULL, SKIP, value_slice
from kerncast.ptx import parse
from tests.emu.ptxkit import HEADER
from tests.emu.trace_diff import trace_differences

# a loop of FMAs whose result is only stored: the FMAs and the stored value are dead
FMA_LOOP = f"""{HEADER}.visible .entry k(.param .u64 out, .param .u32 n)
{{
.reg .u32 %r<6>; .reg .u64 %rd<4>; .reg .f32 %f<4>; .reg .pred %p<2>;
ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x; cvt.rn.f32.u32 %f1, %r2; mov.u32 %r3, 0;
LOOP:
fma.rn.f32 %f1, %f1, %f1, %f1;
add.u32 %r3, %r3, 1;
setp.lt.u32 %p1, %r3, %r1;
@%p1 bra LOOP;
mul.wide.u32 %rd2, %r2, 4; add.u64 %rd3, %rd1, %rd2;
st.global.f32 [%rd3], %f1;
ret;
}}
"""

# an index read from global memory goes through shared memory into an address
THROUGH_SHARED = f"""{HEADER}.visible .entry k(.param .u64 out, .param .u64 idx)
{{
.reg .u32 %r<8>; .reg .u64 %rd<8>; .reg .f32 %f<2>;
.shared .align 4 .b8 buf[256];
ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [idx];
mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 4;
add.u64 %rd4, %rd2, %rd3; ld.global.u32 %r2, [%rd4];
mov.u32 %r3, buf; shl.b32 %r4, %r1, 2; add.u32 %r5, %r3, %r4;
st.shared.u32 [%r5], %r2;
bar.sync 0;
xor.b32 %r6, %r4, 4; add.u32 %r7, %r3, %r6; ld.shared.u32 %r2, [%r7];
mul.wide.u32 %rd5, %r2, 4; add.u64 %rd6, %rd1, %rd5;
cvt.rn.f32.u32 %f1, %r1;
st.global.f32 [%rd6], %f1;
ret;
}}
"""


def _both(module, launch, args, **kw):
    full = emulate(module, launch, args, **kw)
    needed = emulate(module, launch, [a.copy() if isinstance(a, np.ndarray) else a
                                      for a in args], values="needed", **kw)
    return full, needed


def test_dead_arithmetic_is_skipped_and_the_trace_is_the_same():
    module = parse(FMA_LOOP)
    modes = value_slice(build_program(module.entries[0], module)).modes
    text = [str(item.instr) for item in build_program(module.entries[0], module).items]
    by_text = dict(zip(text, modes))
    assert by_text["fma.rn.f32 %f1, %f1, %f1, %f1;"] == SKIP
    assert by_text["cvt.rn.f32.u32 %f1, %r2;"] == SKIP
    assert by_text["add.u32 %r3, %r3, 1;"] == FULL
    assert by_text["st.global.f32 [%rd3], %f1;"] == ADDRESSES
    out = np.zeros(64, np.float32)
    full, needed = _both(module, ((1,), (64,)), [out, 7])
    assert trace_differences(full.trace, needed.trace) == []
    assert needed.steps == full.steps and needed.thread_steps == full.thread_steps
    assert full.outputs["out"][1] != 0  # the full run computed, the other did not need to
    assert needed.outputs["out"].tolist() == [0.0] * 64


def test_values_that_reach_addresses_through_memory_are_computed():
    module = parse(THROUGH_SHARED)
    sl = value_slice(build_program(module.entries[0], module))
    assert {"global", "shared"} <= sl.spaces
    idx = np.random.default_rng(1).permutation(64).astype(np.uint32)
    full, needed = _both(module, ((1,), (64,)), [np.zeros(64, np.float32), idx])
    assert trace_differences(full.trace, needed.trace) == []
    addresses = needed.trace.memory.address[needed.trace.memory.pc == max(
        needed.trace.memory.pc)]
    assert len(np.unique(addresses)) == 64


def test_faults_still_fire_when_values_are_skipped():
    module = parse(FMA_LOOP)
    with pytest.raises(MemoryFault, match="st.global.f32"):
        emulate(module, ((1,), (64,)), [np.zeros(16, np.float32), 3], values="needed")


def test_values_must_be_all_or_needed():
    with pytest.raises(InputError, match="values"):
        emulate(FMA_LOOP, ((1,), (32,)), [np.zeros(32, np.float32), 1], values="some")


@pytest.mark.toolchain
@pytest.mark.parametrize("name", ["arith_fp32", "matmul_tiled", "reduce_shuffle", "nbody_forces",
                                  "spmv_csr_scalar", "histo_shared", "bfs_queue_expand",
                                  "scan_block"])
def test_corpus_traces_are_the_same(name):
    full = emulate_corpus(name, "small", check=False)
    needed = emulate_corpus(name, "small", check=False, values="needed")
    assert trace_differences(full.trace, needed.trace) == []


def test_a_program_emulates_again_as_its_module_does():
    module = parse(FMA_LOOP)
    program = build_program(module.entries[0], module)
    assert value_slice(program) is value_slice(program)  # found once per program
    runs = [emulate(program, ((2,), (64,)), [np.zeros(128, np.float32), 5], values="needed")
            for _ in range(2)]
    again = emulate(module, ((2,), (64,)), [np.zeros(128, np.float32), 5], values="needed")
    for run in runs:
        assert trace_differences(again.trace, run.trace) == []
        assert run.steps == again.steps


def test_an_unsupported_instruction_the_trace_skips_is_reported_by_a_program():
    # a texture fetch whose values nothing needs: the trace skips it, the emulator
    # cannot run it
    text = FMA_LOOP.replace("LOOP:\n", "LOOP:\ntex.1d.v4.f32.s32 {%f1, %f2, %f3, %f0}, "
                            "[tex0, {%r2}];\n").replace(".visible .entry",
                                                       ".global .texref tex0;\n.visible .entry")
    module = parse(text)
    program = build_program(module.entries[0], module)
    assert SKIP in value_slice(program).modes
    for _ in range(2):  # each emulation: the translation never succeeded
        with pytest.raises(UnsupportedInstruction, match="tex.1d"):
            emulate(program, ((1,), (32,)), [np.zeros(32, np.float32), 1], values="needed")

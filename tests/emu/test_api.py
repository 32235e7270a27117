"""The public entry points."""

import numpy as np
import pytest

import kerncast
from kerncast.emu import UnsupportedInstruction, emulate
from kerncast.ptx import parse
from tests.emu.ptxkit import HEADER

COPY = f"""{HEADER}.visible .entry copy(.param .u64 a, .param .u64 b)
{{
.reg .u32 %r<3>; .reg .u64 %rd<6>;
ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 4; add.u64 %rd4, %rd1, %rd3; ld.global.u32 %r2, [%rd4];
add.u64 %rd5, %rd2, %rd3; st.global.u32 [%rd5], %r2;
ret;
}}
"""


def test_kerncast_emulate_is_the_emulator():
    assert kerncast.emulate is emulate


def test_text_function_and_names():
    src, dst = np.arange(64, dtype=np.uint32), np.zeros(64, np.uint32)
    by_text = emulate(COPY, ((1,), (64,)), {"a": src, "b": dst})
    assert by_text.outputs["b"].tolist() == src.tolist()
    func = parse(COPY).function("copy")
    by_func = emulate(func, ((1,), (64,)), [src, dst], trace=False)
    assert by_func.trace is None and by_func.outputs["b"].tolist() == src.tolist()
    assert by_func.steps == by_text.steps == 2 * 9
    assert by_func.thread_steps == 64 * 9


def test_a_function_alone_cannot_inline_calls():
    text = f"""{HEADER}.func f()
{{
ret;
}}
.visible .entry k()
{{
call.uni f, ();
ret;
}}
"""
    func = parse(text).function("k")
    with pytest.raises(UnsupportedInstruction, match="call of f needs the whole PTX module"):
        emulate(func, ((1,), (32,)), [])
    assert emulate(parse(text), ((1,), (32,)), []).steps == 3  # call, ret of f, ret

"""Helpers for emulator tests: inline PTX kernels around one instruction, and CUDA
snippets compiled with nvcc (cached)."""

from __future__ import annotations

import numpy as np

from kerncast.emu import emulate
from kerncast.frontend import compile as compile_source
from kerncast.ptx import parse

NP = {"f32": np.float32, "f64": np.float64, "s32": np.int32, "u32": np.uint32,
      "b32": np.uint32, "s64": np.int64, "u64": np.uint64, "b64": np.uint64,
      "s16": np.int16, "u16": np.uint16, "b16": np.uint16, "f16": np.float16,
      "s8": np.int8, "u8": np.uint8, "pred": np.uint8}
_REG = {"f16": "b16", "s8": "b16", "u8": "b16", "pred": "pred"}

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"


def _size(t: str) -> int:
    return np.dtype(NP[t]).itemsize


def _mem_type(t: str) -> str:
    return {"f16": "b16", "pred": "u8", "s8": "s8", "u8": "u8"}.get(t, t)


def elementwise_ptx(line: str, srcs: list[str], dst: str, extra: str = "") -> str:
    """A kernel ``k(out, in0, in1, ...)``: each thread loads ``%a, %b, %c`` from the
    inputs at its index, runs ``line`` (writing ``%d``) and stores ``%d``."""
    names = "abc"
    params = ",\n".join([".param .u64 out"] + [f".param .u64 in{k}" for k in range(len(srcs))])
    decls = [f".reg .{_REG.get(dst, dst)} %d;"]
    decls += [f".reg .{_REG.get(t, t)} %{names[k]};" for k, t in enumerate(srcs)]
    decls += [".reg .u64 %base, %off, %addr;", ".reg .u32 %rt, %rc, %rn, %i;",
              ".reg .b16 %tmp16;", ".reg .pred %ptmp;"]
    body = ["mov.u32 %rt, %tid.x;", "mov.u32 %rc, %ctaid.x;", "mov.u32 %rn, %ntid.x;",
            "mad.lo.u32 %i, %rc, %rn, %rt;"]
    for k, t in enumerate(srcs):
        body += [f"ld.param.u64 %base, [in{k}];", f"mul.wide.u32 %off, %i, {_size(t)};",
                 "add.u64 %addr, %base, %off;"]
        if t == "pred":
            body += ["ld.global.u8 %tmp16, [%addr];", f"setp.ne.b16 %{names[k]}, %tmp16, 0;"]
        else:
            body += [f"ld.global.{_mem_type(t)} %{names[k]}, [%addr];"]
    body += [line]
    body += ["ld.param.u64 %base, [out];", f"mul.wide.u32 %off, %i, {_size(dst)};",
             "add.u64 %addr, %base, %off;"]
    if dst == "pred":
        body += ["selp.u16 %tmp16, 1, 0, %d;", "st.global.u8 [%addr], %tmp16;"]
    else:
        body += [f"st.global.{_mem_type(dst)} [%addr], %d;"]
    body += ["ret;"]
    text = "\n".join(decls + [extra] + body)
    return f"{HEADER}.visible .entry k(\n{params}\n)\n{{\n{text}\n}}\n"


def run_elementwise(line: str, srcs: list[str], dst: str, *inputs, extra: str = ""):
    """Run ``line`` on every element of the inputs; returns the outputs."""
    count = len(inputs[0])
    arrays = [np.ascontiguousarray(np.asarray(x).astype(NP[t]))
              for x, t in zip(inputs, srcs)]
    out = np.zeros(count, NP[dst])
    ptx = elementwise_ptx(line, srcs, dst, extra)
    threads = min(count, 128)
    blocks = -(-count // threads)
    if blocks * threads != count:
        raise ValueError("use a count that is a multiple of 128 or below it")
    result = emulate(parse(ptx), ((blocks,), (threads,)), [out, *arrays])
    return result.outputs["out"]


def cuda_module(source: str, **defines):
    """Parse the PTX nvcc makes of ``source`` (cached on disk)."""
    return parse(compile_source(source, lang="cuda", defines=defines).ptx)


def opencl_module(source: str, **defines):
    return parse(compile_source(source, lang="opencl", defines=defines).ptx)

"""Inline PTX for features compilers rarely emit: every atomic operation under
conflicts, named barriers, generic-address tests, brx.idx, special registers."""

import numpy as np
import pytest

from kerncast.emu import emulate
from kerncast.ptx import PTXSyntaxError, parse
from tests.emu.ptxkit import HEADER


def _parse_or_skip(text: str):
    """Parse; skip where the PTX parser of this checkout rejects valid PTX (kerncast.ptx
    is developed separately: .reg parameters and brx tables)."""
    try:
        return parse(text)
    except PTXSyntaxError as exc:
        pytest.skip(f"the PTX parser rejects this valid PTX: {exc}")


def _kernel(body: str, params: str = ".param .u64 out", decls: str = "") -> str:
    return (f"{HEADER}{decls}\n.visible .entry k({params})\n{{\n.reg .u32 %r<16>;\n"
            f".reg .u64 %rd<16>;\n.reg .pred %p<8>;\n.reg .f64 %fd<4>;\n{body}\nret;\n}}\n")


def _sequential(op: str, start: int, values: list[int], extra: list[int] | None = None,
                bits: int = 32) -> tuple[list[int], int]:
    mask = (1 << bits) - 1
    cur, olds = start, []
    for k, v in enumerate(values):
        olds.append(cur)
        if op == "exch":
            cur = v
        elif op == "and":
            cur &= v
        elif op == "or":
            cur |= v
        elif op == "xor":
            cur ^= v
        elif op == "dec":
            cur = v if cur == 0 or cur > v else cur - 1
        elif op == "inc":
            cur = 0 if cur >= v else cur + 1
        elif op == "cas":
            cur = extra[k] if cur == v else cur
        elif op == "add":
            cur = (cur + v) & mask
    return olds, cur


@pytest.mark.parametrize("op", ["exch", "and", "or", "xor", "dec", "inc", "cas", "add"])
@pytest.mark.parametrize("space", ["global", "shared"])
def test_atomics_match_a_sequential_execution(op, space):
    n = 64
    rng = np.random.default_rng(len(op))
    vals = rng.integers(0, 40 if op in ("dec", "inc", "cas") else 2**32, n).astype(np.uint32)
    swap = rng.integers(0, 40, n).astype(np.uint32)
    third = ", %r7" if op == "cas" else ""
    setup_shared = ("mov.u32 %r9, cell;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 st.shared.u32 [%r9], "
                    "7;\nbar.sync 0;\n") if space == "shared" else ""
    addr = "[%r9]" if space == "shared" else "[%rd5]"
    body = f"""
ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [vals]; ld.param.u64 %rd3, [swap];
mov.u32 %r1, %tid.x; mul.wide.u32 %rd4, %r1, 4;
add.u64 %rd6, %rd2, %rd4; ld.global.u32 %r2, [%rd6];
add.u64 %rd7, %rd3, %rd4; ld.global.u32 %r7, [%rd7];
mov.u32 %r6, %r2;
add.u64 %rd5, %rd1, 256;
{setup_shared}atom.{space}.{op}.b32 %r3, {addr}, %r2{third};
add.u64 %rd8, %rd1, %rd4; st.global.u32 [%rd8], %r3;
bar.sync 0;
{"@%p1 ld.shared.u32 %r4, [%r9];" if space == "shared" else ""}
{"@%p1 st.global.u32 [%rd5], %r4;" if space == "shared" else ""}
"""
    text = _kernel(body.replace("b32", "u32") if op in ("add", "inc", "dec") else body,
                   ".param .u64 out, .param .u64 vals, .param .u64 swap",
                   ".shared .align 4 .b8 cell[4];" if space == "shared" else "")
    out = np.zeros(65, np.uint32)
    out[64] = 7
    r = emulate(parse(text), ((1,), (n,)), [out, vals, swap])
    got = r.outputs["out"]
    olds, final = _sequential(op, 7, vals.tolist(), swap.tolist())
    assert got[:64].tolist() == olds
    assert int(got[64]) == final


def test_64_bit_and_double_atomics():
    body = """
ld.param.u64 %rd1, [out]; mov.u32 %r1, %tid.x; cvt.u64.u32 %rd2, %r1;
shl.b64 %rd2, %rd2, 33;
atom.global.add.u64 %rd3, [%rd1], %rd2;
cvt.rn.f64.u32 %fd1, %r1; mul.f64 %fd1, %fd1, 0d3FE0000000000000;
atom.global.add.f64 %fd2, [%rd1+8], %fd1;
red.global.max.u64 [%rd1+16], %rd2;
"""
    out = np.zeros(3, np.uint64)
    r = emulate(parse(_kernel(body)), ((1,), (96,)), [out])
    got = r.outputs["out"]
    assert int(got[0]) == sum(t << 33 for t in range(96)) % 2**64
    assert got[1:2].view(np.float64)[0] == sum(t * 0.5 for t in range(96))
    assert int(got[2]) == 95 << 33


def test_named_barriers_with_producers_and_consumers():
    body = """
ld.param.u64 %rd1, [out]; mov.u32 %r1, %tid.x; mov.u32 %r9, box;
setp.lt.u32 %p1, %r1, 32;
@!%p1 bra CONSUMER;
shl.b32 %r2, %r1, 2; add.u32 %r3, %r9, %r2; add.u32 %r4, %r1, 100;
st.shared.u32 [%r3], %r4;
bar.arrive 1, 64;
bra DONE;
CONSUMER:
bar.sync 1, 64;
sub.u32 %r5, %r1, 32; shl.b32 %r2, %r5, 2; add.u32 %r3, %r9, %r2;
ld.shared.u32 %r6, [%r3];
mul.wide.u32 %rd2, %r5, 4; add.u64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r6;
DONE:
"""
    out = np.zeros(32, np.uint32)
    r = emulate(parse(_kernel(body, decls=".shared .align 4 .b8 box[128];")), ((1,), (64,)),
                [out])
    assert r.outputs["out"].tolist() == list(range(100, 132))


def test_generic_address_conversions_and_tests():
    body = """
ld.param.u64 %rd1, [out]; mov.u32 %r1, %tid.x;
mov.u64 %rd2, cell; cvta.shared.u64 %rd3, %rd2;
isspacep.shared %p1, %rd3; isspacep.global %p2, %rd3; isspacep.global %p3, %rd1;
cvta.to.shared.u64 %rd4, %rd3;
selp.u32 %r2, 1, 0, %p1; selp.u32 %r3, 2, 0, %p2; selp.u32 %r4, 4, 0, %p3;
add.u32 %r2, %r2, %r3; add.u32 %r2, %r2, %r4;
st.u32 [%rd3], %r2;
ld.shared.u32 %r5, [%rd4];
setp.eq.u64 %p4, %rd4, %rd2; selp.u32 %r6, 8, 0, %p4; add.u32 %r5, %r5, %r6;
ldu.global.u32 %r7, [%rd1+4];
add.u32 %r5, %r5, %r7;
st.u32 [%rd1], %r5;
"""
    out = np.array([0, 100], np.uint32)
    r = emulate(parse(_kernel(body, decls=".shared .align 4 .b8 cell[4];")), ((1,), (1,)), [out])
    assert r.outputs["out"][0] == 1 + 4 + 8 + 100


def test_brx_idx_diverges_over_its_table():
    body = """
ld.param.u64 %rd1, [out]; mov.u32 %r1, %tid.x; and.b32 %r2, %r1, 3;
ts: .branchtargets L0, L1, L2, L3;
brx.idx %r2, ts;
L0: mov.u32 %r3, 10; bra END;
L1: mov.u32 %r3, 20; bra END;
L2: mov.u32 %r3, 30; bra END;
L3: mov.u32 %r3, 40;
END:
add.u32 %r3, %r3, %r1;
mul.wide.u32 %rd2, %r1, 4; add.u64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r3;
"""
    out = np.zeros(64, np.uint32)
    r = emulate(_parse_or_skip(_kernel(body)), ((1,), (64,)), [out])
    t = np.arange(64)
    assert r.outputs["out"].tolist() == ((t & 3) * 10 + 10 + t).tolist()
    assert {8} <= set(r.trace.warp(0).lanes().tolist())


def test_special_registers():
    body = """
ld.param.u64 %rd1, [out]; mov.u32 %r1, %tid.x; mov.u32 %r15, %ctaid.x;
mov.u32 %r14, %ntid.x; mad.lo.u32 %r1, %r15, %r14, %r1;
mul.wide.u32 %rd2, %r1, 24; add.u64 %rd3, %rd1, %rd2;
mov.u32 %r2, %laneid; st.global.u32 [%rd3], %r2;
mov.u32 %r3, %warpid; st.global.u32 [%rd3+4], %r3;
mov.u32 %r4, %lanemask_lt; st.global.u32 [%rd3+8], %r4;
mov.u32 %r5, %nctaid.x; st.global.u32 [%rd3+12], %r5;
mov.u32 %r6, %dynamic_smem_size; st.global.u32 [%rd3+16], %r6;
elect.sync %r7|%p1, 0xffffffff; selp.u32 %r8, 1, 0, %p1; add.u32 %r8, %r8, %r7;
st.global.u32 [%rd3+20], %r8;
"""
    out = np.zeros(6 * 128, np.uint32)
    r = emulate(parse(_kernel(body)), ((2,), (64,), 48), [out])
    got = r.outputs["out"].reshape(128, 6)
    t = np.arange(128) % 64
    assert got[:, 0].tolist() == (t % 32).tolist()
    assert got[:, 1].tolist() == (t // 32).tolist()
    assert got[:, 2].tolist() == [(1 << (x % 32)) - 1 for x in t.tolist()]
    assert set(got[:, 3].tolist()) == {2} and set(got[:, 4].tolist()) == {48}
    assert got[:, 5].tolist() == [1 if x % 32 == 0 else 0 for x in t.tolist()]


def test_reg_parameter_functions_and_guarded_returns():
    text = f"""{HEADER}
.func (.reg .u32 %res) clamp(.reg .u32 %x)
{{
.reg .pred %q;
mov.u32 %res, %x;
setp.lt.u32 %q, %x, 10;
@%q ret;
mov.u32 %res, 10;
ret;
}}
.visible .entry k(.param .u64 out)
{{
.reg .u32 %r<4>; .reg .u64 %rd<4>;
ld.param.u64 %rd1, [out]; mov.u32 %r1, %tid.x;
call.uni (%r2), clamp, (%r1);
mul.wide.u32 %rd2, %r1, 4; add.u64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r2;
ret;
}}
"""
    out = np.zeros(32, np.uint32)
    r = emulate(_parse_or_skip(text), ((1,), (32,)), [out])
    assert r.outputs["out"].tolist() == [min(t, 10) for t in range(32)]

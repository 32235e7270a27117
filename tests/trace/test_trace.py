"""Trace contents and analyses on hand-checkable kernels."""

import numpy as np
import pytest

from kerncast.emu import emulate
from kerncast.ptx import InstrClass, parse
from kerncast.trace import (
    SASS_FACTORS, SASS_PRIORS, bank_conflicts, estimate_sass, fit_sass_factors, kernel_totals,
    lru_hit_rate, requests, reuse_distances, sector_stream, simulate_cache,
)
from tests.emu.ptxkit import HEADER


def _strided_load(stride: int, width: str = "u32", size: int = 4) -> str:
    return f"""{HEADER}.visible .entry k(.param .u64 src, .param .u64 dst)
{{
.reg .u32 %r<4>; .reg .u64 %rd<8>; .reg .{width} %v;
ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [dst];
mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x;
mad.lo.u32 %r1, %r2, %r3, %r1;
mul.wide.u32 %rd3, %r1, {stride * size}; add.u64 %rd4, %rd1, %rd3;
ld.global.{width} %v, [%rd4];
mul.wide.u32 %rd5, %r1, {size}; add.u64 %rd6, %rd2, %rd5;
st.global.{width} [%rd6], %v;
ret;
}}
"""


@pytest.mark.parametrize("stride,sectors", [(1, 4), (2, 8), (4, 16), (8, 32), (32, 32)])
def test_sectors_of_strided_loads(stride, sectors):
    src = np.arange(64 * 32 * stride, dtype=np.uint32)
    dst = np.zeros(64 * 32, np.uint32)
    r = emulate(parse(_strided_load(stride)), ((16,), (128,)), [src, dst])
    assert r.outputs["dst"].tolist() == src[::stride].tolist()
    t = kernel_totals(r.trace)
    assert t["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 64
    assert t["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 64 * sectors
    assert t["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] == 64 * 4
    reqs = requests(r.trace.memory).select(space="global", kind="load")
    assert set(reqs.lines.tolist()) == {sectors // 4 if stride < 32 else 32}
    assert (reqs.lanes == 32).all() and (reqs.bytes == 128).all()


def test_64_and_128_bit_loads():
    for width, size, sectors in (("u64", 8, 8), ("v4.u32", 16, 16)):
        ptx = _strided_load(1, "u64", 8) if width == "u64" else None
        if ptx is None:
            ptx = _strided_load(1, "u64", 8).replace(".reg .u64 %v;", ".reg .u32 %v<4>;") \
                .replace("ld.global.u64 %v,", "ld.global.v4.u32 {%v0, %v1, %v2, %v3},") \
                .replace("st.global.u64 [%rd6], %v;", "st.global.v4.u32 [%rd6], {%v0, %v1, %v2, %v3};") \
                .replace(", 8;", ", 16;")
        src = np.arange(32 * size // 4, dtype=np.uint32)
        dst = np.zeros_like(src)
        r = emulate(parse(ptx), ((1,), (32,)), [src, dst])
        assert r.outputs["dst"].tolist() == src.tolist()
        t = kernel_totals(r.trace)
        assert t["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == sectors


def _shared_pattern(stride_words: int, width: int = 4) -> str:
    wtype = {4: "u32", 8: "u64", 16: "v4.u32"}[width]
    value = "%v" if width != 16 else "{%v, %v, %v, %v}"
    reg = ".reg .u64 %v;" if width == 8 else ".reg .u32 %v;"
    return f"""{HEADER}.visible .entry k(.param .u64 dst)
{{
.reg .u32 %r<6>; .reg .u64 %rd<4>; {reg}
.shared .align 16 .b8 buf[65536];
mov.u32 %r1, %tid.x; mov.u32 %r2, buf;
mul.lo.u32 %r3, %r1, {stride_words * 4}; add.u32 %r4, %r2, %r3;
cvt.u{64 if width == 8 else 32}.u32 %v, %r1;
st.shared.{wtype} [%r4], {value};
ld.shared.{wtype} {value}, [%r4];
ret;
}}
"""


@pytest.mark.parametrize("stride,conflicts", [(1, 0), (2, 1), (4, 3), (32, 31), (33, 0),
                                              (0, 0)])
def test_bank_conflicts_of_32_bit_accesses(stride, conflicts):
    r = emulate(parse(_shared_pattern(stride)), ((1,), (64,)), [np.zeros(1, np.uint32)])
    t = kernel_totals(r.trace)
    assert t["smsp__inst_executed_op_shared_ld.sum"] == 2
    assert t["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 2 * conflicts
    assert t["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] == 2 * (conflicts + 1)


@pytest.mark.parametrize("width,stride,wavefronts,conflicts", [
    (8, 2, 2, 0), (8, 4, 4, 2), (8, 32, 32, 30), (16, 4, 4, 0), (16, 8, 8, 4),
    (16, 0, 2, 0)])
def test_bank_conflicts_of_wide_accesses(width, stride, wavefronts, conflicts):
    r = emulate(parse(_shared_pattern(stride, width)), ((1,), (32,)), [np.zeros(1, np.uint32)])
    report = bank_conflicts(r.trace.memory)
    assert report.total("load") == (wavefronts, conflicts)


def test_partial_warps_and_divergence_in_the_trace():
    ptx = f"""{HEADER}.visible .entry k(.param .u64 dst)
{{
.reg .u32 %r<4>; .reg .u64 %rd<4>; .reg .pred %p;
ld.param.u64 %rd1, [dst]; mov.u32 %r1, %tid.x;
setp.lt.u32 %p, %r1, 10;
@%p bra SKIP;
mul.wide.u32 %rd2, %r1, 4; add.u64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r1;
SKIP:
ret;
}}
"""
    r = emulate(parse(ptx), ((1,), (40,)), [np.zeros(40, np.uint32)])
    streams = r.trace.streams()
    assert set(streams) == {0, 1}
    w0, w1 = streams[0], streams[1]
    assert w0.lanes().tolist()[:4] == [32, 32, 32, 32] and 22 in w0.lanes().tolist()
    assert set(w1.lanes().tolist()) == {8}
    assert w0.instructions == len(w0.pcs())
    counts = r.trace.instruction_counts()
    assert counts[InstrClass.ST_GLOBAL] == (2, 30)
    reqs = requests(r.trace.memory)
    assert reqs.lanes.tolist() == [22, 8]
    t = kernel_totals(r.trace)
    assert t["smsp__thread_inst_executed.sum"] == sum(s.lanes().sum() for s in streams.values())
    assert t["smsp__inst_executed.sum"] == w0.instructions + w1.instructions
    # each warp's steps in issue order, as a stable sort of the 64-bit ids orders them
    trace = r.trace
    assert trace.warp_order.tolist() == np.argsort(trace.step_warps, kind="stable").tolist()
    again = trace.streams()
    assert again is not streams and again.keys() == streams.keys()  # the caller's own dict
    assert all(again[w] is streams[w] for w in streams)  # derived once


def test_local_memory_is_interleaved_per_warp():
    ptx = f"""{HEADER}.visible .entry k(.param .u64 dst)
{{
.reg .u32 %r<4>; .reg .u64 %rd<4>;
.local .align 4 .b8 depot[64];
mov.u32 %r1, %tid.x; mov.u64 %rd1, depot;
st.local.u32 [%rd1+8], %r1; ld.local.u32 %r2, [%rd1+8];
st.local.v4.u32 [%rd1+16], {{%r1, %r1, %r1, %r1}};
ret;
}}
"""
    r = emulate(parse(ptx), ((1,), (64,)), [np.zeros(1, np.uint32)])
    t = kernel_totals(r.trace)
    assert t["l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"] == 4
    assert t["l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"] == 2 * 4 + 2 * 16
    assert t["l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"] == 2 * 4


def test_reuse_distances_match_a_direct_count():
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 40, 3000)
    got = reuse_distances(keys)
    last: dict[int, int] = {}
    want = []
    for i, k in enumerate(keys.tolist()):
        want.append(len(set(keys[last[k] + 1:i].tolist())) if k in last else -1)
        last[k] = i
    assert got.tolist() == want
    assert reuse_distances(np.array([5, 6, 5, 5, 7, 6])).tolist() == [-1, -1, 1, 0, -1, 2]


def test_lru_cache_simulation_matches_a_reference_model():
    rng = np.random.default_rng(2)
    sectors = rng.integers(0, 400, 5000).astype(np.uint64)
    result = simulate_cache(sectors, size=64 * 128, line=128, ways=4)
    sets, ways = 64 // 4, 4
    cache = [[] for _ in range(sets)]
    filled: dict[int, set] = {}
    want = []
    for s in sectors.tolist():
        line = s // 4
        lines = cache[line % sets]
        if line in lines:
            lines.remove(line)
            lines.append(line)
            hit = s in filled[line]
            filled[line].add(s)
        else:
            if len(lines) == ways:
                filled.pop(lines.pop(0))
            lines.append(line)
            filled[line] = {s}
            hit = False
        want.append(hit)
    assert result.hits.tolist() == want
    stores = rng.random(5000) < 0.3
    no_alloc = simulate_cache(sectors, size=64 * 128, ways=4, stores=stores,
                              allocate_on_store=False)
    assert no_alloc.accesses == int((~stores).sum())


def test_sector_stream_and_hit_rates_of_a_real_trace():
    src = np.arange(64 * 32, dtype=np.uint32)
    r = emulate(parse(_strided_load(1)), ((16,), (128,)), [src, np.zeros_like(src)])
    sectors, kinds = sector_stream(r.trace.memory)
    assert len(sectors) == 64 * 4 * 2
    again, _, owner = sector_stream(r.trace.memory, kinds=("load",), with_requests=True)
    assert len(again) == 64 * 4 and np.bincount(owner).tolist() == [4] * 64
    first = again[owner == owner[0]]  # 32 consecutive words: 4 consecutive sectors
    assert np.diff(first.astype(np.int64)).tolist() == [1, 1, 1]
    assert lru_hit_rate(reuse_distances(sectors), 1 << 20) == 0.0
    twice = np.concatenate([sectors, sectors])
    assert lru_hit_rate(reuse_distances(twice), 1 << 20) == 0.5


def test_sass_estimate_counts_64_bit_integer_work_twice():
    src = np.arange(64 * 32, dtype=np.uint32)
    r = emulate(parse(_strided_load(1)), ((16,), (128,)), [src, np.zeros_like(src)])
    est = estimate_sass(r.trace, factors=SASS_PRIORS)
    warps = 64
    assert est["method"] == "factors" and est["fallback"] == ""
    assert est["ld_param"] == 0
    assert est["int64"] == 2 * 2 * warps  # two add.u64 per warp, two SASS each
    assert est["mov_special"] == 2 * warps and est["mov_const"] == 0
    assert est["total"] == pytest.approx(
        sum(v for k, v in est.items() if k not in ("total", "method", "fallback")))
    assert est["total"] < r.trace.steps
    calibrated = estimate_sass(r.trace, method="factors")
    assert calibrated["int64"] == pytest.approx(SASS_FACTORS["int64"] * 2 * warps)


def test_fitting_sass_factors_recovers_known_factors():
    rng = np.random.default_rng(9)
    truth = {**SASS_PRIORS, "int64": 0.7, "mov": 0.1, "int_div32": 25.0}
    counts = [{k: float(rng.integers(0, 1000)) for k in SASS_PRIORS} for _ in range(60)]
    measured = [sum(c[k] * truth[k] for k in c) for c in counts]
    fitted = fit_sass_factors(counts, measured, strength=1e-6)
    for key in ("int64", "mov", "int_div32", "int32"):
        assert fitted[key] == pytest.approx(truth[key], rel=1e-3, abs=1e-3)
    assert fitted["memory"] == SASS_PRIORS["memory"]  # fixed

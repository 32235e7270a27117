"""Control flow, barriers, calls, memory spaces, atomics and warp collectives, on
kernels nvcc compiles from tests/emu/kernels.cu."""

from pathlib import Path

import numpy as np
import pytest

from kerncast.emu import emulate
from tests.emu.ptxkit import cuda_module

pytestmark = pytest.mark.toolchain
RNG = np.random.default_rng(17)


@pytest.fixture(scope="module")
def mod():
    return cuda_module((Path(__file__).parent / "kernels.cu").read_text())


def run(mod, entry, launch, args, **kw):
    return emulate(mod, launch, args, entry=entry, **kw)


def test_if_else_diverges_and_reconverges(mod):
    x = RNG.integers(0, 100, 256).astype(np.int32)
    out = np.zeros(512, np.int32)
    r = run(mod, "if_else", ((2,), (128,)), [x, out])
    want = x.astype(np.int64).copy()
    for i in range(1, 256, 2):
        k, v = 0, int(x[i])
        while k < (v & 7):
            v = (v * 3 + k + 2**31) % 2**32 - 2**31
            k += 1
        want[i] = v
    want[::2] -= 7
    got = r.outputs["if_else_param_1"]
    assert got[:256].tolist() == want.astype(np.int32).tolist()
    assert got[256::2].tolist() == (x[::2] - 7).tolist()
    stream = r.trace.warp(0)
    lanes = stream.lanes()
    assert lanes[0] == 32 and lanes[-1] == 32
    assert 16 in lanes.tolist()  # each path ran with half the warp
    assert min(lanes) >= 1


def test_nested_loops_with_breaks(mod):
    limit = RNG.integers(0, 40, 512).astype(np.int32)
    out = np.zeros(512, np.int32)
    r = run(mod, "nested_break", ((4,), (128,)), [limit, out])
    want = []
    for n in limit.tolist():
        acc = 0
        for a in range(n):
            for b in range(8):
                if b * a > n:
                    break
                acc += a ^ b
            if acc > 100:
                break
        want.append(acc)
    assert r.outputs["nested_break_param_1"].tolist() == want


def test_block_reduction_with_barriers(mod):
    x = RNG.standard_normal(1024).astype(np.float32)
    out = np.zeros(4, np.float32)
    r = run(mod, "block_sum", ((4,), (256,)), [x, out])
    assert np.allclose(r.outputs["block_sum_param_1"], x.reshape(4, 256).sum(axis=1), rtol=1e-5)


def test_syncthreads_count_and_or(mod):
    x = np.arange(-30, 98, dtype=np.int32)
    out = np.zeros(3, np.int32)
    r = run(mod, "sync_count", ((1,), (128,)), [x, out])
    assert r.outputs["sync_count_param_1"].tolist() == [int((x > 0).sum()), 1, 0]


def test_exited_threads_do_not_hold_a_barrier(mod):
    x = np.arange(96, dtype=np.int32)
    out = np.zeros(2, np.int32)
    r = run(mod, "early_exit_barrier", ((2,), (96,)), [x, out, 50])
    assert r.outputs["early_exit_barrier_param_1"].tolist() == [sum(range(50))] * 2


def test_device_function_calls(mod):
    x = RNG.uniform(-1, 1, 128).astype(np.float32)
    coef = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    out = np.zeros(128, np.float32)
    r = run(mod, "calls", ((1,), (128,)), [x, coef, out, 4])
    poly = lambda v: np.polyval(coef[::-1].astype(np.float64), v)  # noqa: E731
    assert np.allclose(r.outputs["calls_param_2"], poly(x) + poly(-x), rtol=1e-5)


def test_generic_pointers_into_shared_global_and_local(mod):
    x = RNG.uniform(1, 2, 128).astype(np.float32)
    out = np.ones(128, np.float32)
    r = run(mod, "generic_pointers", ((1,), (128,)), [x, out])
    t = np.arange(128)
    want = 1 + 2 * x + x + (x * (t & 3) + 1)
    assert np.allclose(r.outputs["generic_pointers_param_1"], want, rtol=1e-6)
    spaces = set(r.trace.memory.space.tolist())
    assert {0, 1, 2} <= spaces  # global, shared and local accesses were traced


def test_local_arrays(mod):
    idx = RNG.integers(0, 1000, 64).astype(np.int32)
    out = np.zeros(64, np.int32)
    r = run(mod, "local_array", ((1,), (64,)), [idx, out])
    t = np.arange(64)
    a, b = idx % 24, (idx + 5) % 24
    assert r.outputs["local_array_param_1"].tolist() == (a * a + t + b * b + t).tolist()


def test_atomics_serialise_like_a_sequential_run(mod):
    n = 1024
    x = RNG.integers(-1000, 1000, n).astype(np.int32)
    counter, tickets = np.zeros(1, np.int32), np.zeros(n, np.int32)
    fsum, bins = np.zeros(1, np.float32), np.zeros(8, np.int32)
    wrap, mx = np.zeros(1, np.uint32), np.array([-10**9, 10**9], np.int32)
    r = run(mod, "atomics", ((8,), (128,)), [counter, tickets, fsum, bins, wrap, mx, x])
    o = r.outputs
    assert o["atomics_param_0"][0] == n
    assert sorted(o["atomics_param_1"].tolist()) == list(range(n))
    assert o["atomics_param_2"][0] == n * 0.5
    assert o["atomics_param_3"].tolist() == np.bincount(x & 7, minlength=8).tolist()
    assert o["atomics_param_4"][0] == n % 10
    assert o["atomics_param_5"].tolist() == [x.max(), x.min()]


def test_cas_loop(mod):
    x = RNG.integers(0, 10**6, 512).astype(np.int32)
    value = np.zeros(1, np.int32)
    r = run(mod, "cas_max", ((4,), (128,)), [value, x])
    assert r.outputs["cas_max_param_0"][0] == x.max()


def test_shared_atomics(mod):
    x = RNG.integers(0, 100, 512).astype(np.int32)
    out = np.zeros(16, np.int32)
    r = run(mod, "shared_histogram", ((4,), (128,)), [x, out])
    assert r.outputs["shared_histogram_param_1"].tolist() == np.bincount(x & 15, minlength=16).tolist()


def test_shuffles_and_votes(mod):
    x = RNG.integers(0, 100, 64).astype(np.int32)
    out = np.zeros(6 * 64, np.int32)
    r = run(mod, "shuffles", ((1,), (64,)), [x, out])
    got = r.outputs["shuffles_param_1"].reshape(64, 6)
    for i in range(64):
        w, lane = i // 32 * 32, i % 32
        down = x[w + lane + 3] if lane + 3 < 32 else x[i]
        seg = lane // 16 * 16
        up = x[i - 5] if lane - 5 >= seg else x[i]
        bfly = x[w + (lane ^ 9)]
        idx = x[w + lane // 8 * 8 + 7]
        ballot = sum(1 << k for k in range(32) if x[w + k] & 1)
        both = int((x[w:w + 32] > 0).all()) + 2 * int((x[w:w + 32] > 90).any())
        assert got[i].tolist() == [down, up, bfly, idx, np.int32(np.uint32(ballot)), both]


def test_match_reduce_activemask(mod):
    x = RNG.integers(0, 100, 64).astype(np.int32)
    out = np.zeros(4 * 64, np.uint32)
    r = run(mod, "warp_misc", ((1,), (64,)), [x, out])
    got = r.outputs["warp_misc_param_1"].reshape(64, 4)
    for i in range(64):
        w = i // 32 * 32
        same = sum(1 << k for k in range(32) if (x[w + k] & 3) == (x[i] & 3))
        assert got[i, 0] == same
        assert got[i, 1] == 0xFFFFFFEF  # every lane matched: full mask, predicate set
        assert got[i, 2] == x[w:w + 32].sum()
        want_active = sum(1 << k for k in range(32) if k & 2) if i & 2 else 0
        assert got[i, 3] == want_active


def test_warp_shuffle_reduction(mod):
    x = RNG.standard_normal(256).astype(np.float32)
    out = np.zeros(8, np.float32)
    r = run(mod, "warp_sum", ((2,), (128,)), [x, out])
    assert np.allclose(r.outputs["warp_sum_param_1"], x.reshape(8, 32).sum(axis=1), rtol=1e-5)


def test_vector_accesses_constants_and_module_variables(mod):
    x = RNG.standard_normal(4 * 64).astype(np.float32)
    out = np.zeros(2 * 64, np.float32)
    counter = np.zeros(1, np.int32)
    r = run(mod, "vectors_const", ((1,), (64,)), [x, out, counter])
    v = x.reshape(64, 4)
    want = np.stack([v[:, 0] * 0.5 + v[:, 1] * 0.25, v[:, 2] * 2.0 - v[:, 3]], axis=1)
    assert np.allclose(r.outputs["vectors_const_param_1"].reshape(64, 2), want)
    assert r.outputs["vectors_const_param_2"][0] == 42
    assert x.tolist() == r.outputs["vectors_const_param_0"].tolist()
    assert int(r.variables["launches"].view(np.int32)[0]) == 42


def test_dynamic_shared_memory(mod):
    x = np.arange(64, dtype=np.int32)
    out = np.zeros(64, np.int32)
    r = run(mod, "dynamic_shared", ((1,), (64,), 256), [x, out])
    assert r.outputs["dynamic_shared_param_1"].tolist() == x[::-1].tolist()


def test_three_dimensional_grids(mod):
    out = np.zeros(8 * 6 * 4, np.int32)
    r = run(mod, "grid3d", {"grid": (2, 3, 2), "block": (4, 2, 2)}, [out])
    got = r.outputs["grid3d_param_0"].reshape(4, 6, 8)
    z, y, xx = np.meshgrid(np.arange(4), np.arange(6), np.arange(8), indexing="ij")
    tx = xx % 4
    assert (got == xx + 100 * y + 10000 * z + 1000000 * tx).all()


def test_inputs_are_never_modified(mod):
    x = RNG.integers(0, 100, 128).astype(np.int32)
    out = np.full(256, -5, np.int32)
    before = out.copy()
    r = run(mod, "if_else", ((1,), (128,)), [x, out])
    assert (out == before).all()
    assert (r.outputs["if_else_param_1"] != before).any()


def test_a_large_buffer_written_is_copied_only_where_the_blocks_reach(mod, monkeypatch):
    from kerncast.emu import _memory

    x = RNG.integers(0, 100, 256).astype(np.int32)
    out = np.full(1 << 20, -5, np.int32)  # 4 MiB, 64 chunks of 64 KiB
    whole = run(mod, "if_else", ((2,), (128,)), [x, out]).outputs["if_else_param_1"]
    monkeypatch.setattr(_memory, "PARTIAL_BYTES", 1 << 20)
    r = run(mod, "if_else", ((2,), (128,)), [x, out])
    store = r._regions["if_else_param_1"].store
    assert store.filled is not None and store.filled.tolist() == [True] + [False] * 63
    # the outputs hold every byte: the chunks the blocks reached and the rest, unchanged
    got = r.outputs["if_else_param_1"]
    assert store.filled is None and (got == whole).all() and (got[512:] == -5).all()
    assert (out == -5).all()  # the caller's array is never written


def test_a_partly_copied_store_copies_the_chunks_an_access_reaches(monkeypatch):
    from kerncast.emu import _memory
    from kerncast.emu._memory import CHUNK_SHIFT, Store

    monkeypatch.setattr(_memory, "PARTIAL_BYTES", 1 << CHUNK_SHIFT)
    source = np.arange(4 << CHUNK_SHIFT, dtype=np.uint8)
    source.flags.writeable = False
    store = Store(source, writable=False)
    store.make_writable()
    assert not store.data.any()
    # an 8-byte access that straddles chunks 1 and 2, and one in chunk 3
    chunk = 1 << CHUNK_SHIFT
    store.touch(np.array([2 * chunk - 4, 3 * chunk + 8], np.uint64), 8)
    assert store.filled.tolist() == [False, True, True, True]
    assert (store.data[chunk:] == source[chunk:]).all() and not store.data[:chunk].any()
    store.data[chunk] = 7  # written, then completed: the write stays
    store.complete()
    assert store.data[chunk] == 7 and (store.data[:chunk] == source[:chunk]).all()


def test_a_chunked_input_is_made_only_where_the_blocks_read(mod):
    from kerncast.core import Chunked

    values = RNG.integers(0, 100, 1 << 20).astype(np.int32)  # 4 MiB, 64 chunks of 64 KiB
    made: list[int] = []

    def piece(k):
        made.append(k)
        return values[k << 14:(k + 1) << 14]

    out = np.zeros(512, np.int32)
    whole = run(mod, "if_else", ((2,), (128,)), [values, out]).outputs["if_else_param_1"]
    r = run(mod, "if_else", ((2,), (128,)), [Chunked(np.int32, values.size, 1 << 14, piece), out])
    assert made == [0]  # the blocks read the first 256 values
    assert r._regions["if_else_param_0"].store.filled.tolist() == [True] + [False] * 63
    assert (r.outputs["if_else_param_1"] == whole).all()
    assert (r.outputs["if_else_param_0"] == values).all()  # made whole when read whole

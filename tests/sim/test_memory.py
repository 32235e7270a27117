"""Memory requests of a trace, and the SM's L1 and L2-share model that serves them."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from kerncast.sim._memory import (DRAM_CHUNK, RequestCost, RequestCosts, SMCaches, match_rows,
                                  request_costs, static_vectors,
                                  vector_carrier)
from kerncast.trace import KINDS, SPACES, MemoryAccesses

SECTOR = 32
LAT = (30.0, 300.0, 700.0)  # L1, L2, DRAM latencies (cycles) used for the cache model


def _accesses(requests: list[dict]) -> MemoryAccesses:
    """One row per lane: each request is ``{warp, pc, step, addresses, space, kind, width}``."""
    cols = {k: [] for k in ("event", "request", "pc", "warp", "lane", "address", "width",
                            "kind", "space", "step")}
    for rid, r in enumerate(requests):
        for lane, address in enumerate(r["addresses"]):
            cols["event"].append(rid)
            cols["request"].append(rid)
            cols["pc"].append(r.get("pc", 0))
            cols["warp"].append(r.get("warp", 0))
            cols["lane"].append(lane)
            cols["address"].append(address)
            cols["width"].append(r.get("width", 4))
            cols["kind"].append(KINDS.index(r.get("kind", "load")))
            cols["space"].append(SPACES.index(r.get("space", "global")))
            cols["step"].append(r.get("step", 0))
    types = {"address": np.uint64, "kind": np.int8, "space": np.int8}
    return MemoryAccesses(**{k: np.asarray(v, types.get(k, np.int64)) for k, v in cols.items()})


def _trace(requests: list[dict]):
    return SimpleNamespace(memory=_accesses(requests))


BASE = 1 << 20  # a 128-byte aligned global address


# -- request_costs -----------------------------------------------------------------------

@pytest.mark.parametrize("stride,sectors,lines", [(4, 4, 1), (8, 8, 2), (32, 32, 8),
                                                  (128, 32, 32), (0, 1, 1)])
def test_global_request_sectors_and_lines(stride, sectors, lines):
    trace = _trace([{"warp": 0, "pc": 7, "step": 3,
                     "addresses": [BASE + lane * stride for lane in range(32)]}])
    costs = request_costs(trace)
    assert list(costs) == [(0, 3, 7)]
    cost = costs[(0, 3, 7)]
    assert len(cost.sectors) == sectors and cost.lines == lines
    assert cost.sectors[0] == BASE // SECTOR
    assert cost.wavefronts == 1 and cost.share == 1.0


def test_requests_are_keyed_by_warp_step_and_pc_and_numbered_per_instance():
    reqs = [{"warp": w, "pc": 5, "step": s, "addresses": [BASE + 128 * s + 4 * i
                                                           for i in range(32)]}
            for w in (0, 1, 4) for s in (0, 1, 2)]
    costs = request_costs(_trace(reqs), wpb=4)
    assert set(costs) == {(w, s, 5) for w in (0, 1, 4) for s in (0, 1, 2)}
    # the k-th execution of pc 5 by warp w of its block is instance (w % wpb, 5, k)
    assert costs[(4, 2, 5)].instance == (0, 5, 2)
    assert costs[(1, 0, 5)].instance == (1, 5, 0)


def test_shared_bank_conflicts_replay_the_request():
    free = [{"space": "shared", "addresses": [4 * lane for lane in range(32)]}]
    same_bank = [{"space": "shared", "addresses": [128 * lane for lane in range(32)]}]
    broadcast = [{"space": "shared", "addresses": [0] * 32}]
    assert request_costs(_trace(free))[(0, 0, 0)].wavefronts == 1
    assert request_costs(_trace(same_bank))[(0, 0, 0)].wavefronts == 32
    assert request_costs(_trace(broadcast))[(0, 0, 0)].wavefronts == 1
    two_way = [{"space": "shared", "addresses": [8 * lane for lane in range(32)]}]
    assert request_costs(_trace(two_way))[(0, 0, 0)].wavefronts == 2


def test_local_accesses_of_a_warp_are_interleaved_and_kept_apart_from_global():
    local = [{"space": "local", "addresses": [0] * 32}]  # every thread's word 0
    cost = request_costs(_trace(local))[(0, 0, 0)]
    assert len(cost.sectors) == 4 and cost.lines == 1  # 32 lanes x 4 bytes, contiguous
    glob = request_costs(_trace([{"addresses": [4 * i for i in range(32)]}]))[(0, 0, 0)]
    assert not set(cost.sectors) & set(glob.sectors)


def test_sharing_sets_the_dram_share_of_global_requests_only():
    class Half:
        def fraction(self, instance):
            return 0.5

    trace = _trace([{"pc": 0, "addresses": [BASE + 4 * i for i in range(32)]},
                    {"pc": 1, "space": "shared", "addresses": [4 * i for i in range(32)]}])
    costs = request_costs(trace, sharing=Half())
    assert costs[(0, 0, 0)].share == 0.5
    assert costs[(0, 0, 1)].share == 1.0


def test_no_accesses_no_requests():
    assert request_costs(_trace([])) == {}


# -- SMCaches ----------------------------------------------------------------------------

def _line(k: int) -> tuple[int, ...]:
    return tuple(range(4 * k, 4 * k + 4))


def test_first_touch_goes_to_dram_then_hits_in_l1():
    caches = SMCaches(l1_bytes=64 * 1024, l2_share_bytes=1 << 20)
    ready, below, dram = caches.load(_line(0), 1.0, 0.0, LAT)
    assert ready == pytest.approx(LAT[2])
    assert below == 4 and dram == 4  # 128 bytes = two 64-byte DRAM chunks
    ready, below, dram = caches.load(_line(0), 1.0, 1000.0, LAT)
    assert ready == pytest.approx(1000.0 + LAT[0]) and below == 0 and dram == 0
    assert caches.stats["l1_hits"] == 4 and caches.stats["sectors"] == 8


def test_a_dram_fetch_brings_its_whole_chunk_into_the_l2():
    per_chunk = DRAM_CHUNK // SECTOR
    assert per_chunk >= 2
    caches = SMCaches(l1_bytes=64 * 1024, l2_share_bytes=1 << 20)
    _, _, dram = caches.load((0,), 1.0, 0.0, LAT)
    assert dram == per_chunk
    ready, below, dram = caches.load((1,), 1.0, 10.0, LAT)  # the chunk's other sector
    assert below == 1 and dram == 0 and ready == pytest.approx(10.0 + LAT[1])
    _, _, dram = caches.load((per_chunk,), 1.0, 20.0, LAT)  # the next chunk
    assert dram == per_chunk


def test_a_request_waits_for_a_fill_already_in_flight():
    caches = SMCaches(l1_bytes=64 * 1024, l2_share_bytes=1 << 20)
    first, _, _ = caches.load(_line(0), 1.0, 0.0, LAT)
    second, below, dram = caches.load(_line(0), 1.0, 5.0, LAT)
    assert second == pytest.approx(first) and below == 0 and dram == 0


def test_share_interpolates_between_l2_and_dram():
    for share in (0.0, 0.25, 1.0):
        caches = SMCaches(l1_bytes=64 * 1024, l2_share_bytes=1 << 20)
        ready, _, dram = caches.load(_line(0), share, 0.0, LAT)
        assert ready == pytest.approx(LAT[1] + share * (LAT[2] - LAT[1]))
        assert dram == pytest.approx(4 * share)


def test_a_warm_launch_fetches_nothing_from_dram_and_waits_once_per_page():
    caches = SMCaches(l1_bytes=64 * 1024, l2_share_bytes=1 << 20, warm=True)
    page = 1 << 16  # sectors in a 2 MiB page
    ready, below, dram = caches.load(_line(0), 0.0, 0.0, LAT)
    assert ready == pytest.approx(LAT[2]) and below == 4 and dram == 0  # the translation
    ready, _, dram = caches.load(_line(1), 0.0, 100.0, LAT)  # same page: the L2's latency
    assert ready == pytest.approx(100.0 + LAT[1]) and dram == 0
    ready, _, _ = caches.load((page,), 0.0, 200.0, LAT)  # the next page
    assert ready == pytest.approx(200.0 + LAT[2])
    assert caches.store(_line(2), 0.0) == (4, 0.0)  # written back to no DRAM
    cold = SMCaches(l1_bytes=64 * 1024, l2_share_bytes=1 << 20)
    assert cold.store(_line(2), 1.0) == (4, 4.0)


def test_buffers_copied_back_before_the_launch_are_warm_and_the_rest_cold():
    page = 1 << 16  # sectors in a 2 MiB page
    restored = np.array([[page, 2 * page]], np.int64)  # the second page's sectors
    caches = SMCaches(l1_bytes=64 * 1024, l2_share_bytes=1 << 20, warm=restored)
    ready, below, dram = caches.load(_line(page // 4), 1.0, 0.0, LAT)
    assert ready == pytest.approx(LAT[2]) and below == 4 and dram == 0  # the translation
    ready, _, dram = caches.load(_line(page // 4 + 1), 1.0, 100.0, LAT)
    assert ready == pytest.approx(100.0 + LAT[1]) and dram == 0
    assert caches.store(_line(page // 4 + 2), 1.0) == (4, 0.0)  # written back after
    _, _, dram = caches.load(_line(0), 1.0, 200.0, LAT)  # the first page is cold
    assert dram == pytest.approx(4.0)
    assert caches.store(_line(1), 1.0) == (4, 4.0)
    # a replica's private copy of a restored sector is restored too
    private = page + (3 << 46)
    _, _, dram = caches.load((private + 40,), 1.0, 300.0, LAT)
    assert dram == 0
    assert caches.stats["dram"] == pytest.approx(8.0)


def test_l1_evicts_least_recently_used_sectors():
    caches = SMCaches(l1_bytes=16 * 1024, l2_share_bytes=1 << 24)
    lines = 16 * 1024 // 128
    for k in range(lines):
        caches.load(_line(k), 1.0, 0.0, LAT)
    caches.load(_line(0), 1.0, 1e4, LAT)        # touch line 0: now the newest
    caches.load(_line(lines), 1.0, 1e4, LAT)    # evicts line 1, not line 0
    _, below0, _ = caches.load(_line(0), 1.0, 2e4, LAT)
    _, below1, dram1 = caches.load(_line(1), 1.0, 2e4, LAT)
    assert below0 == 0
    assert below1 == 4 and dram1 == 0  # out of L1, still in the L2 share


def test_data_beyond_the_l2_share_returns_to_dram():
    """Two passes over 64 KiB: an L2 share that holds it serves the second pass, one
    that holds a quarter of it does not (LRU over a cyclic pass keeps nothing)."""
    def two_passes(l2_bytes):
        caches = SMCaches(l1_bytes=16 * 1024, l2_share_bytes=l2_bytes)
        total = 0.0
        for t in range(2):
            for k in range(512):
                total += caches.load(_line(k), 1.0, float(t), LAT)[2]
        return total, caches.stats

    fits, fit_stats = two_passes(128 * 1024)
    spills, _ = two_passes(16 * 1024)
    assert fits == pytest.approx(512 * 4) and fit_stats["l2_hits"] >= 512 * 4
    assert spills == pytest.approx(2 * 512 * 4)


def test_stores_write_through_and_drop_the_l1_copy():
    caches = SMCaches(l1_bytes=64 * 1024, l2_share_bytes=1 << 20)
    caches.load(_line(0), 1.0, 0.0, LAT)
    below, dram = caches.store(_line(0), 1.0)
    # loaded, then updated in place: the dirty line is written back once all the same
    assert below == 4 and dram == 4
    assert caches.store(_line(0), 1.0) == (4, 0)  # dirty already: one write-back
    _, below, dram = caches.load(_line(0), 1.0, 1000.0, LAT)
    assert below == 4 and dram == 0  # L1 copy dropped; the L2 has it
    below, dram = caches.store(_line(5), 1.0)
    assert below == 4 and dram == 4  # first write of these sectors: written back once
    assert caches.store(_line(5), 1.0) == (4, 0)
    _, _, dram = caches.load(_line(5), 1.0, 2000.0, LAT)
    assert dram == 0  # a written sector is read from the L2
    assert caches.store(_line(5), 1.0) == (4, 0)  # and stays dirty


# -- shared accesses that ptxas merges into vectors -------------------------------------------

def _corpus_trace(name: str):
    from kerncast.emu import emulate_corpus

    return emulate_corpus(name, "small", blocks=[0], check=False).trace


def _shared_loads(costs: dict) -> list:
    shared, load = SPACES.index("shared"), KINDS.index("load")
    return [rc for rc in costs.values() if rc.space == shared and rc.kind == load]


def test_shared_loads_ptxas_merges_are_one_request_each():
    """The tiled multiply's 32 scalar shared loads a tile step are 20 ``LDS`` (4 of them
    ``LDS.128``) on an H100, served in 24 wavefronts: the H100's counters for it show
    exactly 20 shared-load instructions and 24.0 wavefronts per warp and tile step."""
    trace = _corpus_trace("matmul_tiled")
    vectors, accesses = static_vectors(trace, "sm_90")
    assert vectors and all(len(group) == 4 for group in vectors)
    scalar = _shared_loads(request_costs(trace, wpb=trace.warps_per_block))
    merged = _shared_loads(request_costs(trace, wpb=trace.warps_per_block, accesses=accesses))
    assert len(merged) * 32 == len(scalar) * 20
    assert sum(rc.wavefronts for rc in merged) * 32 == sum(rc.wavefronts for rc in scalar) * 24


def test_only_the_merges_the_sass_makes_are_kept():
    """reduce_tree's ``s[tid]``, ``s[tid + 1]`` could be one ``LDS.64`` but ptxas leaves
    them scalar; without a PTX target nothing is merged."""
    from kerncast.trace import vector_groups

    trace = _corpus_trace("reduce_tree")
    assert vector_groups(trace.program)
    assert static_vectors(trace, "sm_90")[0] == []
    assert static_vectors(_corpus_trace("matmul_tiled"), None)[0] == []


def test_a_merged_group_issues_once_holding_all_its_registers():
    from kerncast.sim import machine_for
    from kerncast.sim._pipeline import K_MEM, build_table

    trace = _corpus_trace("matmul_tiled")
    vectors, _ = static_vectors(trace, "sm_90")
    machine = machine_for("h100-sxm")
    plain, _, _ = build_table(trace.program, machine)
    table, _, _ = build_table(trace.program, machine, vectors)
    for group in vectors:
        carrier = vector_carrier(group, trace.program)
        assert table[carrier].kind == K_MEM
        assert set(table[carrier].dsts) == {r for pc in group for r in plain[pc].dsts}
        assert all(table[pc].kind != K_MEM and table[pc].issue == 0 for pc in group
                   if pc != carrier)


def test_match_rows_finds_the_last_key_row_of_each_query():
    rng = np.random.default_rng(11)
    keys = tuple(rng.integers(0, 4, 60) for _ in range(3))
    query = tuple(rng.integers(0, 5, 200) for _ in range(3))
    last = {k: row for row, k in enumerate(zip(*(c.tolist() for c in keys)))}
    want = [last.get(k, -1) for k in zip(*(c.tolist() for c in query))]
    assert match_rows(keys, query).tolist() == want
    assert match_rows(keys, tuple(np.zeros(0, np.int64) for _ in range(3))).tolist() == []


def test_request_costs_read_as_the_mapping_they_stand_for():
    costs = {(0, 3, 7): RequestCost(0, 0, (5, 6, 9), 2, 1, 0.5, (0, 7, 1), 96, 1.0),
             (1, 0, 2): RequestCost(1, 1, (), 0, 4, 1.0, (1, 2, 0), 128, 0.25)}
    table = RequestCosts.of(costs)
    assert table == costs and dict(table) == costs and len(table) == 2
    assert table.rows_of([1, 0, 1], [0, 3, 1], [2, 7, 2]).tolist() == [1, 0, -1]
    assert RequestCosts.of(table) is table and len(RequestCosts.of({})) == 0

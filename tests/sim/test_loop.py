"""The compiled event loop's parts: its LRU sets, its heaps, and the same prediction
whether Numba compiles it or Python runs it."""

from __future__ import annotations

import heapq
import json
import os
import subprocess
import sys
from collections import OrderedDict

import numpy as np
import pytest

from kerncast.sim._loop import compiled, lru_size, new_lru, new_set, reserve_set

# the compiled functions (the plain ones where Numba is missing)
_LOOP = compiled()
_home, _slot, _lru_insert, _lru_touch, _lru_drop = (_LOOP._home, _LOOP._slot, _LOOP._lru_insert,
                                                     _LOOP._lru_touch, _LOOP._lru_drop)
_push, _pop, _replace, set_add = _LOOP._push, _LOOP._pop, _LOOP._replace, _LOOP.set_add


def _keys_oldest_first(lru) -> list[int]:
    keys, nxt, meta = lru[2], lru[5], lru[6]
    out, slot = [], int(meta[0])
    while slot >= 0:
        out.append(int(keys[slot]))
        slot = int(nxt[slot])
    return out


def test_an_lru_keeps_the_most_recent_keys_in_the_order_an_ordered_dict_does():
    rng = np.random.default_rng(3)
    lru, model = new_lru(16), OrderedDict()
    for key in rng.integers(0, 40, 2000).tolist():
        op = key % 3
        slot = _slot(lru, key)
        if op == 0:  # drop, as a store drops the L1's copy
            _lru_drop(lru, key)
            model.pop(key, None)
        elif slot >= 0:
            _lru_touch(lru, slot)
            model.move_to_end(key)
        else:
            _lru_insert(lru, key, float(key))
            model[key] = float(key)
            if len(model) > 16:
                model.popitem(last=False)
        assert _keys_oldest_first(lru) == list(model)
        assert lru_size(lru) == len(model)
    for key, value in model.items():
        assert lru[3][_slot(lru, key)] == value


def test_an_lru_finds_keys_that_share_a_bucket_after_others_are_evicted():
    # keys whose first bucket is the same: erasing one must leave the others reachable
    mask = int(new_lru(8)[6][5])
    home = _home(5, mask)
    keys = [k for k in range(-(1 << 40), -(1 << 40) + 200_000, 7) if _home(k, mask) == home][:6]
    assert len(keys) == 6
    lru = new_lru(4)
    for key in keys:
        _lru_insert(lru, key, float(key))
    assert [k for k in keys if _slot(lru, k) >= 0] == keys[2:]  # the oldest two evicted
    _lru_drop(lru, keys[3])
    assert [k for k in keys if _slot(lru, k) >= 0] == [keys[2], keys[4], keys[5]]
    for key in (keys[2], keys[4], keys[5]):
        assert lru[3][_slot(lru, key)] == float(key)


def test_a_set_grows_to_hold_what_is_reserved_and_keeps_its_members():
    table = new_set()
    members = [k * (1 << 46) + 3 for k in range(-50, 50)]
    table = reserve_set(table, len(members))
    assert [set_add(table, k) for k in members] == [True] * len(members)
    assert not set_add(table, members[7])
    grown = reserve_set(table, 1000)
    assert len(grown[0]) >= 2 * 1100
    assert not any(set_add(grown, k) for k in members)
    assert int(grown[2][0]) == len(members)


def test_the_heaps_pop_warps_in_the_order_of_pythons_tuples():
    rng = np.random.default_rng(5)
    ht, hw, hn = np.zeros((2, 64)), np.zeros((2, 64), np.int64), np.zeros(2, np.int64)
    model: list[tuple[float, int]] = []
    free = list(range(60))
    for _ in range(3000):
        action = rng.integers(0, 3)
        if action == 0 and free:
            t, w = float(rng.integers(0, 8)), free.pop(int(rng.integers(0, len(free))))
            _push(ht, hw, hn, 1, t, w)
            heapq.heappush(model, (t, w))
        elif action == 1 and model:
            t, w = _pop(ht, hw, hn, 1)
            assert (t, w) == heapq.heappop(model)
            free.append(int(w))
        elif model:
            t = float(rng.integers(0, 8))
            _replace(ht, hw, hn, 1, t, model[0][1])
            heapq.heapreplace(model, (t, model[0][1]))
        assert hn[1] == len(model)
        if model:
            assert (ht[1, 0], hw[1, 0]) == model[0]
    assert hn[0] == 0


_PREDICT = """
import json, sys
import kerncast.sim._loop as loop
from kerncast.corpus import get_kernel
from kerncast.sim import predict_launch
loop.INTERPRETED = 0  # compiled from the first round, where Numba compiles at all
kernel = get_kernel(sys.argv[1])
result = predict_launch(*kernel.instance(kernel.launch("small"), "cuda"), "h100")
print(json.dumps([result.seconds, result.bottleneck]))
"""


def test_a_process_interprets_the_loop_until_compiling_it_costs_less(monkeypatch):
    import kerncast.sim._loop as loop

    compiling = []
    monkeypatch.setattr(loop, "_COMPILED", [])
    monkeypatch.setattr(loop, "_interpreted", [0])
    monkeypatch.setattr(loop, "INTERPRETED", 1000)
    monkeypatch.setattr(loop, "compiled", lambda: compiling.append(True) or "compiled")
    assert loop.for_round(600) is loop and loop.for_round(400) is loop
    assert not compiling
    assert loop.for_round(1) == "compiled" and compiling


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["matmul_tiled", "histo_global"])
def test_a_prediction_is_the_same_compiled_and_interpreted(kernel):
    def predicted(disable: str) -> list:
        env = dict(os.environ, NUMBA_DISABLE_JIT=disable)
        out = subprocess.run([sys.executable, "-c", _PREDICT, kernel], env=env, check=True,
                             capture_output=True, text=True, timeout=600).stdout
        return json.loads(out.splitlines()[-1])

    assert predicted("0") == predicted("1")


@pytest.mark.parametrize("size", [1, 2, 7, 8, 14, 21, 28, 32])
def test_a_blocks_warps_hold_every_spread_rank_at_each_read_and_take_each_in_turn(size):
    rank = compiled().spread_rank
    for read in range(3):
        assert sorted(rank(warp, read, size) for warp in range(size)) == list(range(size))
    # a warp's rank moves on from read to read until it has held every one
    assert sorted(rank(size - 1, read, size) for read in range(size)) == list(range(size))

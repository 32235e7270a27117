"""A campaign over several GPUs: one worker per GPU, the same rows as one GPU records,
failed shards as rows, every GPU checked before anything runs."""

from __future__ import annotations

import json

import pytest

from kerncast import InputError
from kerncast.corpus import get_kernel
from kerncast.data import Dataset
from kerncast.data.schema import TABLE_KEYS
from kerncast.measure._campaign import Campaign
from kerncast.measure._gpus import item_cost, parse_gpus, shards_of
from kerncast.measure._plan import Item, Unit
from kerncast.measure._timing import TimingPolicy

FAKE = "tests.measure.fakes:FakeBackend"
QUICK = TimingPolicy(warmup=1, warmup_s=0.0, min_reps=5, max_reps=8, budget_s=0.2)
KERNELS = ["matmul_naive", "matmul_tiled", "copy_vector", "arith_fp32"]


def _keys(out):
    times = Dataset.read(out).times
    return sorted(tuple(r) for r in times[TABLE_KEYS["times"]].itertuples(index=False))


def _gpu_of(frame):
    return {json.loads(t)["gpu"] if isinstance(t, str) else t["gpu"]
            for t in frame["tool_versions"]}


@pytest.mark.parametrize("executor", ["pool", pytest.param("ray", marks=pytest.mark.slow)])
def test_two_gpus_record_what_one_records_each_worker_pinned(tmp_path, child_env, executor):
    if executor == "ray":
        ray = pytest.importorskip("ray")
        ray.shutdown()  # a cluster started by another test has no GPUs; this one gets two
    options = {"device": "h100", "backend": FAKE, "kernels": KERNELS, "sizes": ["small"],
               "policy": QUICK, "workers": 0}
    one = Campaign(tmp_path / "one", **options).run()
    two = Campaign(tmp_path / "two", gpus=("0", "1"), executor=executor, **options).run()
    assert two.remaining == 0 and two.compacted and two.measured == one.measured
    assert two.statuses == one.statuses == {"ok": one.measured}
    assert _keys(tmp_path / "two") == _keys(tmp_path / "one")  # no gap, no duplicate
    assert _gpu_of(Dataset.read(tmp_path / "two").times) == {"0", "1"}
    log = json.loads((tmp_path / "two" / "campaign.json").read_text())
    assert [e["event"] for e in log] == ["started", "ended"] and log[0]["gpus"] == ["0", "1"]
    assert any(n.startswith("GPU 0:") for n in two.notes)


def test_an_interrupted_multi_gpu_campaign_resumes(tmp_path, child_env):
    child_env.setenv("KC_FAKE_SLEEP", "0.03")
    options = {"device": "h100", "backend": FAKE, "kernels": KERNELS[:2], "sizes": ["small"],
               "policy": QUICK, "workers": 0, "gpus": ("0", "1")}
    first = Campaign(tmp_path / "out", deadline_s=7.0, **options).run()
    assert first.stopped_by_deadline and first.remaining > 0
    child_env.setenv("KC_FAKE_SLEEP", "0")
    second = Campaign(tmp_path / "out", **options).run()
    assert second.remaining == 0 and second.measured == first.remaining
    assert len(set(_keys(tmp_path / "out"))) == len(_keys(tmp_path / "out")) == 26


def test_a_shard_whose_worker_dies_becomes_failure_rows(tmp_path, child_env):
    child_env.setenv("KC_FAKE", json.dumps({"matmul_tiled": "crash"}))
    result = Campaign(tmp_path / "out", device="h100", backend=FAKE, kernels=KERNELS[:2],
                      sizes=["small"], policy=QUICK, workers=0, gpus=("0", "1")).run()
    times = Dataset.read(tmp_path / "out").times
    assert result.remaining == 0 and len(times) == 26
    tiled = times[times.kernel == "matmul_tiled"]
    assert set(tiled.status) == {"crash"} and set(times[times.kernel != "matmul_tiled"].status) \
        == {"ok"}


def _unit(name, size, sms):
    kernel = get_kernel(name)
    return Unit(kernel, size, [Item(i, "sm-sweep", name, size, "c", (), "cuda", sm)
                               for i, sm in enumerate(sms)])


def test_shards_balance_estimated_cost_costliest_first():
    """The cost is a fixed part plus the buffer bytes, whatever the SM count: matmul_naive
    at size large (2 x (1 + 48 MiB / 4 MiB)) outweighs the three others together."""
    units = [_unit("matmul_naive", "large", [8, 16]), _unit("arith_fp32", "small", [132]),
             _unit("copy_vector", "small", [132]), _unit("matmul_tiled", "medium", [132, 66])]
    cost = {u.kernel.name: sum(item_cost(u, i) for i in u.items) for u in units}
    assert cost["matmul_naive"] > sum(v for k, v in cost.items() if k != "matmul_naive")
    assert item_cost(units[0], units[0].items[0]) == item_cost(units[0], units[0].items[1])
    shards = shards_of(units, gpus=2, per_gpu=1)
    assert shards[0] == ["matmul_naive"]
    assert sorted(shards[1]) == ["arith_fp32", "copy_vector", "matmul_tiled"]
    assert sorted(n for s in shards_of(units, 2) for n in s) == \
        ["arith_fp32", "copy_vector", "matmul_naive", "matmul_tiled"]


@pytest.mark.parametrize("spec, message", [("0,0", "twice"), ("x", "indices"), ("", "indices"),
                                           ("0,,banana", "indices")])
def test_bad_gpu_lists_are_input_errors(spec, message):
    with pytest.raises(InputError, match=message):
        parse_gpus(spec)


def test_gpu_lists_keep_indices_and_uuids():
    assert parse_gpus("0, 1") == ("0", "1")
    assert parse_gpus(["GPU-1234", "2"]) == ("GPU-1234", "2")
    assert parse_gpus(None) == ()

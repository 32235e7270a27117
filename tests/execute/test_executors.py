"""Executors: the same results serially, on a process pool and on a local Ray cluster;
failures and dead workers are rows, never lost."""

from __future__ import annotations

import os
from operator import mul

import pytest

import kerncast
from kerncast import InputError
from kerncast.execute import CORES_VARIABLE, Failed, get_executor, pin_cores

from tests.models.test_user_api import VECTOR_ADD, _vector_add_args

BACKENDS = ["serial", "pool", pytest.param("ray", marks=pytest.mark.slow)]


def _divide(shared: int, item: int) -> float:
    return shared / item


def _die_on(shared: int, item: int) -> int:
    if item == shared:
        os._exit(3)  # the worker process dies
    return item


@pytest.mark.parametrize("name", BACKENDS)
def test_results_and_failures_come_back_for_every_item(name):
    if name == "ray":
        pytest.importorskip("ray")
    executor = get_executor(name, workers=2)
    got = dict(executor.map(_divide, [1, 2, 0, 4], shared=8))
    assert got[0] == 8 and got[1] == 4 and got[3] == 2
    assert isinstance(got[2], Failed) and "ZeroDivisionError" in got[2].error
    assert dict(executor.map(mul, [], shared=1)) == {}


@pytest.mark.parametrize("name", BACKENDS[1:])
def test_a_dead_worker_is_retried_once_then_its_item_recorded_as_failed(name):
    if name == "ray":
        pytest.importorskip("ray")
    got = dict(get_executor(name, workers=2).map(_die_on, list(range(6)), shared=4))
    assert sorted(got) == list(range(6))
    assert isinstance(got[4], Failed)
    assert "died twice" in got[4].error if name == "pool" else got[4].error
    assert [got[i] for i in (0, 1, 2, 3, 5)] == [0, 1, 2, 3, 5]


@pytest.mark.toolchain
@pytest.mark.parametrize("name", BACKENDS)
def test_a_sweep_gives_the_same_predictions_on_every_executor(name):
    if name == "ray":
        pytest.importorskip("ray")
    args, size = _vector_add_args(100_000)
    tune = {"block_size_x": [64, 128, 256, 512]}
    serial, _ = kerncast.sweep("vector_add", VECTOR_ADD, size, args, tune)
    other, _ = kerncast.sweep("vector_add", VECTOR_ADD, size, args, tune, executor=name,
                              workers=2)
    assert [r["time"] for r in other] == [r["time"] for r in serial]


def test_bad_executor_options_are_named():
    with pytest.raises(InputError, match="unknown executor 'threads'; choose one of serial"):
        get_executor("threads")
    with pytest.raises(InputError, match="--workers 0"):
        get_executor("pool", workers=0)
    with pytest.raises(InputError, match="--address names a Ray cluster"):
        get_executor("pool", address="ray://x:10001")


@pytest.mark.parametrize("name", BACKENDS)
def test_an_evaluation_gives_the_same_scores_on_every_executor(name):
    if name == "ray":
        pytest.importorskip("ray")
    from kerncast.evaluate import evaluate
    from tests.synthetic import synthetic_dataset

    data = synthetic_dataset()
    serial = evaluate(data, "launch-regression", folds=3)
    other = evaluate(data, "launch-regression", folds=3,
                     executor=get_executor(name, workers=2))
    columns = ["model", "fold", "kernel", "predicted_s", "ok"]
    assert other.predictions[columns].equals(serial.predictions[columns])


@pytest.mark.toolchain
@pytest.mark.toolchain
@pytest.mark.slow
def test_an_interrupted_sweep_on_ray_resumes_from_its_journal(tmp_path):
    """The journal of a sweep on Ray cut after two rows: the next run on Ray predicts the
    rest only, and the rows equal a whole serial sweep's."""
    pytest.importorskip("ray")
    journal = tmp_path / "sweep.jsonl"
    args, size = _vector_add_args(100_000)
    tune = {"block_size_x": [64, 128, 256, 512]}
    whole, _ = kerncast.sweep("vector_add", VECTOR_ADD, size, args, tune)
    kerncast.sweep("vector_add", VECTOR_ADD, size, args, tune, executor="ray", workers=2,
                   journal=str(journal))
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:3]) + "\n" + lines[3][:20])  # 2 rows, one cut off
    kept = journal.read_text()
    again, _ = kerncast.sweep("vector_add", VECTOR_ADD, size, args, tune, executor="ray",
                              workers=2, journal=str(journal))
    assert [r["time"] for r in again] == [r["time"] for r in whole]
    added = journal.read_text()[len(kept):].strip().splitlines()
    assert len(added) == 2  # only the two configurations the journal lacked


def test_an_interrupted_sweep_resumes_from_its_journal(tmp_path, monkeypatch):
    from kerncast.models import _predict

    journal = tmp_path / "sweep.jsonl"
    args, size = _vector_add_args(100_000)
    tune = {"block_size_x": [64, 128, 256, 512]}
    whole, _ = kerncast.sweep("vector_add", VECTOR_ADD, size, args, tune, journal=str(journal))
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:3]) + "\n" + lines[3][:20])  # 2 rows, one cut off
    asked: list = []
    original = _predict._sweep_row
    monkeypatch.setattr(_predict, "_sweep_row",
                        lambda *a: asked.append(a[1].block) or original(*a))
    again, _ = kerncast.sweep("vector_add", VECTOR_ADD, size, args, tune, journal=str(journal))
    assert [r["time"] for r in again] == [r["time"] for r in whole]
    assert [b[0] for b in asked] == [256, 512]  # only what the journal lacked
    with pytest.raises(InputError, match="not the journal of this sweep"):
        kerncast.sweep("vector_add", VECTOR_ADD, size, args, tune, device="h200",
                       journal=str(journal))


def _where(shared, item):
    return os.environ.get("CUDA_VISIBLE_DEVICES"), len(os.sched_getaffinity(0)), \
        os.environ.get("OMP_NUM_THREADS")


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_pool_workers_pinned_to_a_gpu_and_a_slice_of_the_cores():
    got = dict(get_executor("pool", gpus=["0", "1"]).map(_where, list(range(8))))
    cores = len(os.sched_getaffinity(0))
    assert {g for g, _, _ in got.values()} <= {"0", "1"}
    assert {n for _, n, _ in got.values()} == {cores // 2}
    assert {t for _, _, t in got.values()} == {str(max(1, cores // 8))}


def test_serial_runs_on_one_gpu_only():
    with pytest.raises(InputError, match="one GPU"):
        get_executor("serial", gpus=["0", "1"])


def _slice(shared, item):
    return tuple(sorted(os.sched_getaffinity(0))), os.environ.get(CORES_VARIABLE), \
        os.environ.get("POCL_MAX_PTHREAD_COUNT"), os.environ.get("CUDA_VISIBLE_DEVICES")


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_pool_workers_on_slices_keep_disjoint_cores_and_size_their_threads():
    cores = len(os.sched_getaffinity(0))
    got = set(dict(get_executor("pool", workers=2, slices=True).map(_slice, range(12))).values())
    share = str(cores // 2)
    assert {(c, p, g) for _, c, p, g in got} == {(share, share, None)}
    mine = [set(cpus) for cpus, *_ in got]
    assert all(len(m) == cores // 2 for m in mine)
    assert len(got) <= 2 and (len(got) == 1 or not mine[0] & mine[1])


@pytest.mark.slow
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_ray_tasks_on_slices_size_their_threads():
    ray = pytest.importorskip("ray")
    ray.shutdown()
    got = set(dict(get_executor("ray", workers=2, slices=True).map(_slice, range(4))).values())
    share = str(len(os.sched_getaffinity(0)) // 2)
    assert {(c, p) for _, c, p, _ in got} == {(share, share)}


def test_slices_need_cores_and_a_parallel_executor():
    cores = len(os.sched_getaffinity(0))
    with pytest.raises(InputError, match=f"{cores + 1} slices of {cores} cores leave none"):
        get_executor("pool", workers=cores + 1, slices=True)
    with pytest.raises(InputError, match="serial measures on the whole machine"):
        get_executor("serial", workers=2, slices=True)
    with pytest.raises(InputError, match=f"give at most {cores}"):
        pin_cores(0, cores + 1)

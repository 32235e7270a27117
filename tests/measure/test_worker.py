"""The measuring child: one sweep backend per SM count for its whole life, all closed at
its end (normally, at the deadline, on a fatal error, before a restart)."""

from __future__ import annotations

import json
import time

import pytest

from kerncast._errors import ToolchainError
from kerncast.corpus import get_kernel
from kerncast.measure import _worker
from kerncast.measure._api import monitor_for
from kerncast.measure._campaign import Campaign
from kerncast.measure._supervise import WorkerOutcome, _handle
from kerncast.measure._timing import TimingPolicy

from .fakes import FakeBackend

RECORDED = "tests.measure.test_worker:Recorded"
QUICK = TimingPolicy(warmup=1, warmup_s=0.0, min_reps=5, max_reps=8, budget_s=0.2)


class Recorded(FakeBackend):
    """A fake whose life is logged (made, activate, deactivate, close) with its SM count
    (0 for the whole GPU), timing every launch alike so that rows do not depend on how
    many launches an instance made before."""

    log: list[tuple[str, int]] = []
    refuse: int | None = None  # an SM count whose backend cannot be made (a ToolchainError)

    def __init__(self, device=None, sm_count=None, **options):
        if sm_count is not None and sm_count == Recorded.refuse:
            raise ToolchainError(f"no green context of {sm_count} SMs here")
        super().__init__(device, sm_count, **options)
        self.tag = int(sm_count or 0)
        Recorded.log.append(("made", self.tag))

    def activate(self):
        Recorded.log.append(("activate", self.tag))

    def deactivate(self):
        Recorded.log.append(("deactivate", self.tag))

    def close(self):
        Recorded.log.append(("close", self.tag))

    def time_launch(self, compiled, config, dev_args, before=None):
        super().time_launch(compiled, config, dev_args, before)
        return 1e-5


@pytest.fixture(autouse=True)
def _fresh_log(monkeypatch):
    monkeypatch.setattr(Recorded, "log", [])
    monkeypatch.setattr(Recorded, "refuse", None)
    monkeypatch.delenv("KC_FAKE", raising=False)
    monkeypatch.delenv("KC_FAKE_SLEEP", raising=False)


def _items(*points):
    """Items of ``(experiment, sm_count[, kernel])`` on the small size's default launch."""
    return [{"id": i, "experiment": e, "kernel": rest[0] if rest else "matmul_naive",
             "size": "small", "tunables": {}, "sm_count": sms, "sample_k": 0}
            for i, (e, sms, *rest) in enumerate(points)]


def _run(tmp_path, capfd, items, **job):
    path = tmp_path / "job.json"
    path.write_text(json.dumps({"backend": RECORDED, "sweep_backend": RECORDED,
                                "device": "h100", "items": items, "seed": 0,
                                "policy": QUICK.to_dict(), **job}))
    code = _worker.main([str(path)])
    lines = [line for line in capfd.readouterr().out.splitlines() if line.startswith("KC:")]
    return code, lines


def _rows(lines):
    return [json.loads(line.split(" ", 2)[2]) for line in lines if line.startswith("KC:ROW")]


def _made(kind):
    return [tag for event, tag in Recorded.log if event == kind]


def test_alternating_sm_counts_make_two_backends_and_close_both(tmp_path, capfd):
    code, lines = _run(tmp_path, capfd, _items(*[("sm-sweep", n) for n in (8, 16, 8, 16)]))
    assert code == 0
    assert [line.split()[0] for line in lines].count("KC:DONE") == 4
    assert _made("made") == [8, 16]
    assert sorted(_made("close")) == [8, 16]
    assert Recorded.log[-2:] == [("close", 16), ("close", 8)]  # most recently used first
    # each switch puts the backend in use back before the next takes over
    switches = [e for e in Recorded.log if e[0] in ("activate", "deactivate")]
    assert switches == [("activate", 8), ("deactivate", 8), ("activate", 16),
                        ("deactivate", 16), ("activate", 8), ("deactivate", 8),
                        ("activate", 16), ("deactivate", 16)]
    assert all(r["status"] == "ok" for r in _rows(lines))
    assert [r["sm_count"] for r in _rows(lines)] == [8, 16, 8, 16]


def test_a_whole_gpu_item_between_sweep_items_keeps_the_sweep_backends(tmp_path, capfd):
    items = _items(("sm-sweep", 8), ("times", None), ("sm-sweep", 8), ("sm-sweep", 16),
                   ("times", None))
    code, lines = _run(tmp_path, capfd, items)
    assert code == 0
    rows = _rows(lines)
    assert [(r["experiment"], r["sm_count"], r["status"]) for r in rows] == [
        ("sm-sweep", 8, "ok"), ("times", 132, "ok"), ("sm-sweep", 8, "ok"),
        ("sm-sweep", 16, "ok"), ("times", 132, "ok")]
    assert _made("made") == [8, 0, 16]
    # the sweep backend is put back before the whole GPU's is made or used, and stays
    assert Recorded.log[:4] == [("made", 8), ("activate", 8), ("deactivate", 8), ("made", 0)]
    assert _made("close") == [16, 8, 0]  # the sweeps, most recently used first, then main
    assert sum(line.startswith("KC:READY") for line in lines) == 1


def test_rows_are_those_of_a_new_backend_for_every_item(tmp_path, capfd):
    items = _items(("sm-sweep", 8), ("sm-sweep", 16), ("times", None), ("sm-sweep", 8),
                   ("sm-sweep", 16))
    code, lines = _run(tmp_path, capfd, items)
    assert code == 0
    kernel = get_kernel("matmul_naive")
    config = kernel.launch("small", {})
    expected = []
    for item in items:  # what the worker did before: a backend made afresh per SM count
        backend = Recorded(device="h100", sm_count=item["sm_count"])
        row = backend.measure(kernel, config, policy=QUICK, monitor=monitor_for(backend),
                              experiment=item["experiment"], sm_count_requested=item["sm_count"],
                              seed=0, prep_dir=None)
        expected.append(json.loads(_worker._json(row)))
    got = _rows(lines)
    for row in (*got, *expected):
        row.pop("measured_at")
    assert got == expected


def test_the_least_recently_used_backend_is_closed_beyond_the_limit(tmp_path, capfd,
                                                                    monkeypatch):
    monkeypatch.setattr(_worker, "SWEEP_BACKENDS", 2)
    code, _ = _run(tmp_path, capfd, _items(*[("sm-sweep", n) for n in (8, 16, 8, 24, 16)]))
    assert code == 0
    assert _made("made") == [8, 16, 24, 16]
    assert _made("close") == [16, 8, 16, 24]  # 16 (least recent) for 24, 8 for 16, then the end


def test_a_launch_failure_restarts_after_closing_every_backend(tmp_path, capfd, monkeypatch):
    monkeypatch.setenv("KC_FAKE", json.dumps({"matmul_tiled": "launch_error"}))
    items = _items(("sm-sweep", 8), ("sm-sweep", 16, "matmul_tiled"), ("sm-sweep", 8))
    code, lines = _run(tmp_path, capfd, items)
    assert code == _worker.RESTART_EXIT
    assert [r["status"] for r in _rows(lines)] == ["ok", "launch_failed"]
    assert not any(line.startswith("KC:START 2") for line in lines)
    assert sorted(_made("close")) == [8, 16]


def test_a_fatal_error_closes_the_backends_made_before_it(tmp_path, capfd, monkeypatch):
    monkeypatch.setattr(Recorded, "refuse", 16)
    code, lines = _run(tmp_path, capfd, _items(("sm-sweep", 8), ("sm-sweep", 16)))
    assert code == 2 and lines[-1].startswith("KC:FATAL no green context of 16 SMs")
    assert _made("made") == [8] and _made("close") == [8]


def test_the_deadline_stops_new_items_and_closes_the_backends(tmp_path, capfd, monkeypatch):
    monkeypatch.setenv("KC_FAKE_SLEEP", "0.1")  # an item takes 0.6 s or more
    code, lines = _run(tmp_path, capfd, _items(("sm-sweep", 8), ("sm-sweep", 16)),
                       stop_at=time.time() + 0.3)
    assert code == 0 and lines[-1] == "KC:STOPPED"
    assert _made("made") == [8] and _made("close") == [8]


def test_done_carries_the_wall_time_of_the_item(tmp_path, capfd, monkeypatch):
    monkeypatch.setenv("KC_FAKE_SLEEP", "0.02")
    _, lines = _run(tmp_path, capfd, _items(("sm-sweep", 8)))
    done = [line for line in lines if line.startswith("KC:DONE")]
    item, seconds = done[0].split()[1:]
    assert item == "0" and 0.1 < float(seconds) < 30  # six or more launches of 20 ms
    out = WorkerOutcome()
    got = []
    state = {"current": 0, "since": 0.0, "rows": []}
    _handle(done[0], out, state, lambda i, rows: got.append(i))
    assert got == [0] and out.seconds == {0: float(seconds)} and out.finished == {0}
    _handle("KC:DONE 4", out, {"current": 4, "since": 0.0, "rows": []}, lambda i, r: None)
    assert 4 in out.finished and 4 not in out.seconds  # a child without the time


def test_a_campaign_reports_its_items_wall_time(tmp_path, child_env):
    result = Campaign(tmp_path / "out", device="h100", backend="tests.measure.fakes:FakeBackend",
                      kernels=["matmul_naive"], sizes=["small"], configs="spread",
                      policy=QUICK, workers=0).run()
    assert result.remaining == 0 and result.items_timed == result.measured == 3
    assert 0 < result.item_wall_s < result.elapsed_s


def test_driver_backends_kept_side_by_side_never_leave_a_destroyed_context_current(
        monkeypatch, tmp_path):
    import sys

    from .test_cuda_backends import _driver

    _driver(monkeypatch, [])
    cu = sys.modules["cuda.bindings.driver"]
    ok = cu.CUresult.CUDA_SUCCESS
    state = {"current": None, "destroyed": set(), "bad": [], "n": 0, "retained": 0}

    def create(desc, dev, flags):
        state["n"] += 1
        return ok, f"green{state['n']}"

    def set_current(ctx):
        name = None if ctx is None or ctx == "null" else ctx
        if name in state["destroyed"]:
            state["bad"].append(name)  # the real driver crashes a later call
        state["current"] = name
        return (ok,)

    def retain(dev):
        state["retained"] += 1
        return ok, "primary"

    def release(dev):
        state["retained"] -= 1
        return (ok,)

    cu.cuGreenCtxCreate = create
    cu.cuCtxFromGreenCtx = lambda green: (ok, f"ctx-{green}")
    cu.cuCtxGetCurrent = lambda: (ok, state["current"])
    cu.cuCtxSetCurrent = set_current
    cu.cuGreenCtxDestroy = lambda green: (state["destroyed"].add(f"ctx-{green}"), (ok,))[1]
    cu.cuStreamDestroy = lambda stream: (ok,)
    cu.cuDevicePrimaryCtxRetain = retain
    cu.cuDevicePrimaryCtxRelease = release
    cu.CUcontext = lambda value=0: "null"
    monkeypatch.setattr(_worker, "SWEEP_BACKENDS", 2)
    runner = _worker._Runner({"backend": "driver", "device": "h100", "items": []})
    made = []
    for sms in (8, 16, 8, None, 24, 16, 8):  # None: a whole-GPU item
        backend = runner.main_backend() if sms is None else runner.sweep_backend(sms)
        assert state["current"] == backend.context  # its context is current for the item
        made.append(backend)
    assert all(b._previous is None for b in made)  # each made with no other context current
    runner.close()
    assert state["bad"] == [] and state["current"] is None
    assert state["retained"] == 0
    assert {f"ctx-green{i}" for i in range(1, state["n"] + 1)} == state["destroyed"]


def test_a_gpu_note_gives_the_mean_wall_time_of_its_items():
    from kerncast.measure._gpus import _gpu_note

    note = _gpu_note("GPU 1", {"items": 4, "shards": 2, "wall_s": 1.0, "timed": 4})
    assert note == "GPU 1: 4 items in 2 shards, 0.250 s wall time per item"
    assert _gpu_note("GPU 0", {"items": 0, "shards": 1, "wall_s": 0.0, "timed": 0}) == \
        "GPU 0: 0 items in 1 shards"

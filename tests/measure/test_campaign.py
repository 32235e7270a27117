"""Campaigns: real PoCL runs, failures as rows, kills, deadlines and resuming."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from kerncast import InputError
from kerncast.cli import main
from kerncast.data import Dataset, summarize
from kerncast.data.schema import TABLE_KEYS
from kerncast.measure._campaign import Campaign
from kerncast.measure._timing import TimingPolicy

FAKE = "tests.measure.fakes:FakeBackend"
QUICK = TimingPolicy(warmup=1, warmup_s=0.0, min_reps=5, max_reps=8, budget_s=0.2)


def _keys(frame, table):
    return [tuple(r) for r in frame[TABLE_KEYS[table]].itertuples(index=False)]


def test_pocl_campaign_over_two_corpus_kernels(tmp_path, child_env, capsys, pocl):
    out = tmp_path / "cpu"
    code = main(["measure", "corpus", "--backend", "pocl", "--device", "cpu", "--out", str(out),
                 "--kernels", "matmul_naive,matmul_tiled", "--sizes", "small",
                 "--experiments", "times,samples,cpu", "--configs", "default", "--budget", "0.05",
                 "--json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["remaining"] == 0 and result["compacted"]
    data = Dataset.read(out)
    assert sorted(data.times["kernel"]) == ["matmul_naive", "matmul_tiled"]
    assert set(data.times["status"]) == {"ok"} and set(data.times["language"]) == {"opencl"}
    assert set(data.samples["l2_state"]) == {"warm", "cold"}
    assert set(data.cpu["status"]) == {"ok"} and set(data.cpu["language"]) == {"c"}
    assert summarize(out)["empty_provenance"] == {}
    assert not (out / "parts").exists() or not list((out / "parts").glob("*/*.parquet"))


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_pocl_campaign_on_two_slices_records_each_slice_as_its_own_device(tmp_path, child_env,
                                                                          pocl):
    cores = len(os.sched_getaffinity(0)) // 2
    campaign = Campaign(tmp_path / "halves", device="cpu", backend="pocl",
                        kernels=["copy_vector", "matmul_tiled"], sizes=["small"],
                        configs="default", slices=2, policy=QUICK)
    assert campaign.device_key.endswith(f"-{cores}-cores") and campaign.total_sms == cores
    result = campaign.run()
    assert result.remaining == 0 and result.compacted and result.statuses == {"ok": 2}
    times = Dataset.read(tmp_path / "halves").times
    assert set(times.device) == {campaign.device_key} and set(times.sm_count) == {cores}
    again = Campaign(tmp_path / "halves", device="cpu", backend="pocl",
                     kernels=["copy_vector", "matmul_tiled"], sizes=["small"],
                     configs="default", slices=2, policy=QUICK)
    assert again.pending()[0] == []  # resumed under the slice's key: nothing left
    whole = Campaign(tmp_path / "halves", device="cpu", backend="pocl",
                     kernels=["copy_vector"], sizes=["small"], configs="default")
    assert len(whole.pending()[0]) == 1  # a slice's rows never stand for the whole machine


@pytest.mark.parametrize(("options", "message"), [
    ({"backend": FAKE, "device": "h100", "slices": 2}, "measures a GPU: use --gpus"),
    ({"backend": "pocl", "device": "cpu", "slices": 4096}, "give at most"),
    ({"backend": "pocl", "device": "cpu", "slices": -1}, "give a number of workers"),
])
def test_bad_slices_are_input_errors(tmp_path, options, message):
    with pytest.raises(InputError, match=message):
        Campaign(tmp_path, **options)


def test_failures_become_rows_and_the_campaign_goes_on(tmp_path, child_env):
    child_env.setenv("KC_FAKE", json.dumps({
        "matmul_naive:bx=8,by=4": "hang", "matmul_naive:bx=8,by=8": "crash",
        "matmul_tiled:pad=0,tile=8": "compile_error", "matmul_naive:bx=8,by=32": "wrong",
        "matmul_naive:bx=16,by=2": "launch_error"}))
    # a compile error follows the build: matmul_tiled's tile size is a define
    campaign = Campaign(tmp_path / "fake", device="h100", backend=FAKE,
                        kernels=["matmul_naive", "matmul_tiled"], sizes=["small"],
                        item_timeout_s=2.0, policy=QUICK, workers=0)
    result = campaign.run()
    assert result.remaining == 0
    times = Dataset.read(tmp_path / "fake").times.set_index("config")
    assert times.loc["bx=8,by=4", "status"] == "timeout"
    assert "no result within 2 s" in times.loc["bx=8,by=4", "error"]
    assert times.loc["bx=8,by=8", "status"] == "crash"
    crash = times.loc["bx=8,by=8", "error"]  # the Python stack where the process died
    assert "Segmentation fault" in crash and "fakes.py" in crash
    assert times.loc["pad=0,tile=8", "status"] == "compile_failed"
    assert times.loc["bx=8,by=32", "status"] == "wrong_output"
    assert times.loc["bx=16,by=2", "status"] == "launch_failed"
    assert (times.drop(["bx=8,by=4", "bx=8,by=8", "pad=0,tile=8", "bx=8,by=32", "bx=16,by=2"])
            ["status"] == "ok").all()
    assert len(times) == sum(len(k.launches("small")) for k in campaign.kernels())


def _parts(out):
    return sorted((out / "parts").glob("*/*.parquet")) if (out / "parts").exists() else []


def test_killed_campaign_resumes_without_duplicates_or_gaps(tmp_path, child_env):
    out = tmp_path / "killed"
    env = {**os.environ, "KC_FAKE_SLEEP": "0.03"}
    cmd = [sys.executable, "-m", "kerncast", "measure", "corpus", "--backend", FAKE,
           "--device", "h100", "--out", str(out), "--kernels", "matmul_naive",
           "--sizes", "small", "--budget", "0.1", "--workers", "0", "--flush-rows", "1", "--json"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while len(_parts(out)) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    parts = _parts(out)
    assert 3 <= len(parts) < 20, "the kill should land mid-campaign"
    first = Dataset.read(out)  # every part file is complete and valid
    assert len(first.times) == len(parts)
    import pandas as pd

    raw = pd.concat([pd.read_parquet(p) for p in parts])
    child_env.setenv("KC_FAKE_SLEEP", "0")
    result = Campaign(out, device="h100", backend=FAKE, kernels=["matmul_naive"],
                      sizes=["small"], policy=QUICK, workers=0).run()
    assert result.planned == 20 and result.measured == 20 - len(first.times)
    final = Dataset.read(out).times
    assert len(final) == 20 and set(final["status"]) == {"ok"}
    assert len(set(_keys(final, "times"))) == 20  # no gaps, no duplicates
    assert not _parts(out)  # compacted
    merged = final.set_index("config").loc[raw["config"]]  # the killed run's rows, unchanged
    assert list(merged["measured_at"]) == list(raw["measured_at"])


def test_deadline_stops_new_work_and_the_next_run_resumes(tmp_path, child_env):
    child_env.setenv("KC_FAKE_SLEEP", "0.03")
    out = tmp_path / "deadline"
    first = Campaign(out, device="h100", backend=FAKE, kernels=["matmul_naive"], sizes=["small"],
                     policy=QUICK, workers=0, deadline_s=6.5).run()
    assert first.stopped_by_deadline and 0 < first.measured < 20 and first.remaining > 0
    assert first.elapsed_s < 6.5
    child_env.setenv("KC_FAKE_SLEEP", "0")
    second = Campaign(out, device="h100", backend=FAKE, kernels=["matmul_naive"],
                      sizes=["small"], policy=QUICK, workers=0).run()
    assert second.measured == first.remaining and second.remaining == 0
    assert len(Dataset.read(out).times) == 20


def test_prepared_inputs_are_shared_across_configurations(tmp_path, child_env):
    result = Campaign(tmp_path / "prep", device="h100", backend=FAKE, kernels=["matmul_tiled"],
                      sizes=["small"], policy=QUICK, workers=1).run()
    assert result.remaining == 0 and result.statuses == {"ok": 6}


def test_pocl_refuses_gpu_only_experiments(tmp_path):
    from kerncast import InputError

    with pytest.raises(InputError, match="the pocl backend cannot run counters, sm-sweep"):
        Campaign(tmp_path, device="cpu", backend="pocl", experiments=["counters", "sm-sweep"])
    with pytest.raises(InputError, match="measures this machine's CPU, not 'h100'"):
        Campaign(tmp_path, device="h100", backend="pocl")


def test_plan_skips_kernels_without_the_language(tmp_path):
    from .conftest import FAULTY

    campaign = Campaign(tmp_path, device="h100", backend=FAKE, corpus_root=FAULTY,
                        experiments=["times"], sizes=["small"])
    units, notes = campaign.plan()
    assert units == [] and any("no cuda version" in n for n in notes)


def test_a_unit_prepared_ahead_compiles_what_the_cuda_backends_compile(tmp_path, monkeypatch):
    from kerncast.corpus import get_kernel
    from kerncast.measure import _campaign
    from kerncast.measure._cuda_common import nvrtc_options

    compiled = []
    monkeypatch.setattr(_campaign, "cubin_file", lambda *a: compiled.append(a))
    kernel = get_kernel("matmul_tiled")
    configs = kernel.launches("small")[:2]
    unit = _campaign._prep_task("matmul_tiled", "small", [c.tunables for c in configs],
                                str(tmp_path), 0, None, "sm_90")
    assert (tmp_path / "matmul_tiled" / "small" / "manifest.json").exists()
    assert unit.endswith("small")
    sources = [kernel.instance(c, "cuda")[0] for c in configs]
    assert sorted((text, options, arch) for text, options, arch, _ in compiled) == sorted(
        {(s.source, nvrtc_options(s), "sm_90") for s in sources})


def test_a_unit_that_could_not_be_prepared_ahead_is_a_note(tmp_path):
    from concurrent.futures import Future
    from types import SimpleNamespace

    campaign = Campaign(tmp_path / "out", device="h100", backend=FAKE, kernels=["matmul_tiled"],
                        sizes=["small"], policy=QUICK, workers=1)
    failed, fine = Future(), Future()
    failed.set_exception(AttributeError("no attribute 'ptxas_options'"))
    fine.set_result(str(tmp_path))
    campaign._units = [SimpleNamespace(kernel=SimpleNamespace(name=n), size="large")
                       for n in ("convolve_cols", "saxpy")]
    campaign._futures = {0: failed, 1: fine}
    assert campaign._prep_failures() == [
        "preparing inputs ahead failed for convolve_cols large (AttributeError: no attribute "
        "'ptxas_options'): their items prepared them inline, item by item"]

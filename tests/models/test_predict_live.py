"""Live predictions: the sampling models run their samples through a backend first.

The backend, the sampled runs and the profiler are replaced by the rows kerncast
recorded on its H100, so that the live path is checked against the same model scored
on the dataset.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kerncast._errors import InputError
from kerncast.data import Dataset
from kerncast.models import Sampling, predict
from kerncast.models._trained import trained_model

DATA = Path(__file__).resolve().parents[2] / "data" / "h100"
KERNEL = "dct8x8"


class _Recorded:
    name, device_key, language, sm_count, kind = "cupy", "h100-sxm", "cuda", 132, "gpu"
    l2_states = ("warm", "cold", "paid")


@pytest.fixture(scope="module")
def recorded():
    data = Dataset.read(DATA)
    samples = data.samples[(data.samples["kernel"] == KERNEL) & (data.samples["status"] == "ok")]
    counters = data.counters[(data.counters["kernel"] == KERNEL)
                             & (data.counters["sample_k"] == 3)
                             & (data.counters["status"] == "ok")]
    config = samples["config"].iloc[0]
    times = data.times[(data.times["kernel"] == KERNEL) & (data.times["config"] == config)
                       & (data.times["size"] == samples["size"].iloc[0])
                       & (data.times["sm_count"] == 132)]
    assert len(counters[counters["config"] == config]) == 1
    return (times.head(1), samples[samples["config"] == config],
            counters[counters["config"] == config])


RUNG = ["k", "psat", "blocks_requested", "blocks_launched", "grid_fraction",
        "sample_grid_x", "sample_grid_y", "sample_grid_z"]


def _replay(recorded, calls: list):
    """measure_samples served from the recorded rows; with ``choose``, the ladder they
    hold plus the full grid, each sample served when ``choose`` times it."""
    times, samples, _ = recorded

    def measure_samples(be, job, config=None, choose=None, **kw):
        rows = samples.to_dict("records")
        if choose is None:
            return rows
        by = {(r["k"], r["l2_state"]): r for r in rows}
        rungs = [{c: r[c] for c in RUNG} for r in rows if r["l2_state"] == "cold" and r["k"] > 0]
        full = {**rungs[-1], "k": 0, "blocks_launched": int(times["blocks"].iloc[0]), "status": "ok"}
        rungs = sorted(rungs, key=lambda r: r["k"]) + [full]
        measured = []

        def time(i, state):
            calls.append((rungs[i]["k"], state))
            row = by.get((rungs[i]["k"], state)) or {**full, "l2_state": state,
                                                      "time_median_s": times["time_median_s"].iloc[0]}
            measured.append(row)
            return row["time_median_s"]

        choose(rungs, time)
        return measured

    return measure_samples


@pytest.fixture
def live(monkeypatch, recorded):
    _, samples, counters = recorded
    calls = []
    import kerncast.measure as package
    import kerncast.measure._counters as counters_module
    import kerncast.measure._samples as samples_module

    replay = _replay(recorded, calls)
    monkeypatch.setattr(package, "make_backend", lambda name, device=None: _Recorded())
    monkeypatch.setattr(package, "measure_samples", replay)
    monkeypatch.setattr(samples_module, "measure_samples", replay)  # measure_full reads it there

    def profile(be, device, kernel, config, ks, **kw):
        calls.append(ks)
        return counters.to_dict("records")

    monkeypatch.setattr(counters_module, "profile_sampled", profile)
    return calls


def test_live_svr_predicts_what_the_shipped_model_predicts(live, recorded):
    times, samples, counters = recorded
    tunables = json.loads(times["tunables"].iloc[0])
    got = predict(KERNEL, device="h100", size=times["size"].iloc[0], tunables=tunables,
                  model="sampling-svr")
    want = trained_model("sampling-svr").explain(
        Dataset(times=times.reset_index(drop=True), samples=samples, counters=counters))[0]
    assert live == [(3,)]
    assert np.isfinite(got.seconds) and got.seconds == pytest.approx(want.seconds, rel=1e-9)
    assert got.based_on["svr_trained_on"] == "h100"
    assert got.based_on["backend"] == "cupy"


def test_live_svr_on_a_cpu_device_is_refused_before_measuring(live):
    with pytest.raises(InputError, match="--model sampling"):
        predict(KERNEL, device="cpu", size="small", model="sampling-svr", backend="pocl")
    assert live == []


def _launch(recorded):
    times = recorded[0]
    return dict(device="h100", size=times["size"].iloc[0],
                tunables=json.loads(times["tunables"].iloc[0]))


def test_live_sampling_runs_only_the_samples_it_takes(live, recorded):
    times, samples, _ = recorded
    got = predict(KERNEL, model="sampling", **_launch(recorded))
    data = Dataset(times=times.reset_index(drop=True), samples=samples)
    want = Sampling().fit(data).explain(data)[0]
    assert got.seconds == pytest.approx(want.seconds, rel=1e-12)
    # paid samples only (the CUDA backends time them), each once, as many as the fit
    # rests on (not the whole ladder)
    assert all(state == "paid" for _, state in live) and len(set(live)) == len(live)
    assert got.based_on["sampled_runs"] == len(live) == want.based_on["points"]
    assert len(live) < len(samples)


def test_live_seed_linear_runs_two_warm_samples(live, recorded):
    got = predict(KERNEL, model="seed-linear", **_launch(recorded))
    assert live == [(2, "warm"), (3, "warm")]
    assert np.isfinite(got.seconds)


def test_live_sampling_on_a_cpu_device_keys_the_row_by_the_backend(monkeypatch, live, recorded):
    import kerncast.measure as package

    class _Cpu(_Recorded):
        name, device_key, language, sm_count, kind = "pocl", "cpu:test-16core", "opencl", 16, "cpu"
        l2_states = ("warm", "cold")

    monkeypatch.setattr(package, "make_backend", lambda name, device=None: _Cpu())
    got = predict(KERNEL, model="sampling", backend="pocl", **{**_launch(recorded), "device": "cpu"})
    assert np.isfinite(got.seconds) and got.based_on["device"] == "cpu:test-16core"


def test_live_svr_measures_the_whole_grid_where_its_base_distrusts_the_samples(monkeypatch):
    """sssp_relax: its first two samples launch more of its grid than the budget allows
    (and the line through them is flagged), so the launch is run whole and the SVR
    passes that run on, as it does on the dataset."""
    import kerncast.measure as package
    import kerncast.measure._counters as counters_module
    import kerncast.measure._samples as samples_module

    data = Dataset.read(DATA)
    s, t = data.samples, data.times
    samples = s[(s["kernel"] == "sssp_relax") & (s["status"] == "ok")]
    config, size = samples["config"].iloc[0], samples["size"].iloc[0]
    samples = samples[samples["config"] == config]
    ladder, full = samples[samples["k"] > 0], samples[samples["k"] == 0]
    if not len(full):
        pytest.skip("no samples-full run of sssp_relax in this dataset")
    counters = data.counters[(data.counters["kernel"] == "sssp_relax")
                             & (data.counters["config"] == config)
                             & (data.counters["sample_k"] == 3)]
    times = t[(t["kernel"] == "sssp_relax") & (t["config"] == config) & (t["size"] == size)
              & (t["experiment"] == "times")]
    runs = []

    def measure_samples(be, job, config=None, choose=None, **kw):
        if choose is None:
            runs.append("ladder")
            return ladder.to_dict("records")
        runs.append("whole grid")
        return full.to_dict("records")

    monkeypatch.setattr(package, "make_backend", lambda name, device=None: _Recorded())
    monkeypatch.setattr(package, "measure_samples", measure_samples)
    monkeypatch.setattr(samples_module, "measure_samples", measure_samples)  # measure_full reads it there
    monkeypatch.setattr(counters_module, "profile_sampled",
                        lambda *a, **kw: counters.to_dict("records"))
    got = predict("sssp_relax", device="h100", size=size,
                  tunables=json.loads(times["tunables"].iloc[0]), model="sampling-svr")
    assert runs == ["ladder", "whole grid"]
    assert got.seconds == pytest.approx(full["time_median_s"].iloc[0])
    assert got.based_on["method"].startswith("direct measurement")
    assert "within the budget" in got.based_on["method"]


def test_a_budget_lets_sampling_spend_more_on_its_samples(live, recorded):
    times, samples, _ = recorded
    data = Dataset(times=times.reset_index(drop=True), samples=samples)
    got = predict(KERNEL, model="sampling", budget=1.0, **_launch(recorded))
    want = Sampling(budget=1.0).fit(data).explain(data)[0]
    assert got.seconds == pytest.approx(want.seconds, rel=1e-12)
    assert got.based_on["sample_seconds"] == pytest.approx(want.based_on["sample_seconds"])


@pytest.mark.parametrize("model, budget, message", [
    ("sampling", 0.0, r"--budget 0.0 is not a share of the launch; give a number in \(0, 1\]"),
    ("sampling", 1.5, "--budget 1.5 is not a share"),
    ("seed-linear", 0.1, "the model 'seed-linear' takes no budget"),
    ("static", 0.1, "the model 'static' takes no budget"),
])
def test_a_budget_that_cannot_apply_is_refused_before_measuring(live, recorded, model, budget,
                                                                message):
    with pytest.raises(InputError, match=message):
        predict(KERNEL, model=model, budget=budget, **_launch(recorded))
    assert live == []

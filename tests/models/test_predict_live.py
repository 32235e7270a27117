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
from kerncast.models import predict
from kerncast.models._trained import trained_model

DATA = Path(__file__).resolve().parents[2] / "data" / "h100"
KERNEL = "arith_fp32"


class _Recorded:
    name, device_key, language, sm_count, kind = "cupy", "h100-sxm", "cuda", 132, "gpu"


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


@pytest.fixture
def live(monkeypatch, recorded):
    _, samples, counters = recorded
    calls = []
    import kerncast.measure._counters as counters_module
    import kerncast.measure._factory as factory
    import kerncast.measure._samples as samples_module

    monkeypatch.setattr(factory, "make_backend", lambda name, device=None: _Recorded())
    monkeypatch.setattr(samples_module, "measure_samples",
                        lambda be, kernel, config: samples.to_dict("records"))

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

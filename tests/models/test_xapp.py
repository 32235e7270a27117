"""The xapp predictor: GPU time = CPU time / predicted speedup, for the port as written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kerncast._errors import InputError
from kerncast.cpu._features import FEATURES
from kerncast.data import Dataset
from kerncast.models import Predictor, get_predictor

KERNELS = [f"k{i}" for i in range(12)]
SIZES = ("small", "medium")


def _world(tmp_path: Path, seed: int = 0) -> tuple[Dataset, str]:
    """Features, CPU times and GPU times of 12 kernels whose speedup follows two features."""
    rng = np.random.default_rng(seed)
    feats, cpu, times = [], [], []
    for k in KERNELS:
        base = rng.uniform(0, 1, len(FEATURES))
        for j, size in enumerate(SIZES):
            f = dict(zip(FEATURES, base + 0.05 * j))
            speedup = float(np.exp(1 + 3 * f["ilp16384"] - 2 * f["locStrideOther"]))
            cpu_s = 0.01 * (j + 1)
            feats.append({"kernel": k, "size": size, **f})
            cpu.append({"kernel": k, "size": size, "config": "b=256", "status": "ok", "time_median_s": cpu_s})
            for config, slower in (("b=256", 1.0), ("b=64", 1.7)):
                times.append({"kernel": k, "size": size, "config": config, "status": "ok",
                              "experiment": "times", "sm_count": 132,
                              "time_median_s": cpu_s / speedup * slower})
            times.append({"kernel": k, "size": size, "config": "b=256", "status": "ok",
                          "experiment": "sm-sweep", "sm_count": 32, "time_median_s": cpu_s / speedup * 3})
    path = tmp_path / "features.parquet"
    pd.DataFrame(feats).to_parquet(path)
    return Dataset(times=pd.DataFrame(times), cpu=pd.DataFrame(cpu), name="toy"), str(path)


def test_it_predicts_the_port_as_written_and_nothing_else(tmp_path: Path) -> None:
    data, features = _world(tmp_path)
    train, test = data.subset(KERNELS[:9]), data.subset(KERNELS[9:])
    model = get_predictor("xapp", features=features).fit(train)
    pred = model.predict(test)
    default = (test.times["config"] == "b=256") & (test.times["experiment"] == "times")
    assert np.isfinite(pred[default.to_numpy()]).all()
    assert np.isnan(pred[~default.to_numpy()]).all()
    # each is the row's CPU time over the speedup the fitted model predicts from its features
    cpu = test.cpu.rename(columns={"time_median_s": "cpu_s"})[["kernel", "size", "config", "cpu_s"]]
    rows = test.times[default].merge(pd.read_parquet(features), on=["kernel", "size"]).merge(
        cpu, on=["kernel", "size", "config"])
    np.testing.assert_allclose(pred[default.to_numpy()],
                               rows["cpu_s"].to_numpy() / model._regression().predict(rows))


def test_a_saved_model_predicts_the_same(tmp_path: Path) -> None:
    data, features = _world(tmp_path)
    model = get_predictor("xapp", features=features).fit(data)
    model.save(tmp_path / "m.json")
    again = Predictor.load(tmp_path / "m.json")
    np.testing.assert_allclose(again.predict(data), model.predict(data))


def test_a_profiled_region_gets_a_speedup_an_interval_and_its_reasons(tmp_path: Path) -> None:
    data, features = _world(tmp_path)
    model = get_predictor("xapp", features=features).fit(data)
    region = pd.read_parquet(features).iloc[0][list(FEATURES)].to_dict()
    answer = model.speedup(region, 0.01)
    assert answer["low"] <= answer["speedup"] <= answer["high"]
    assert answer["explain"]["terms"] and answer["trained_on"] == len(KERNELS)
    assert model.speedup(region, 0.01, threshold=1e9)["port"] is False
    with pytest.raises(InputError, match="threshold"):
        model.speedup(region, 0.01, threshold=-1)


def test_too_few_kernels_or_no_cpu_table_are_input_errors(tmp_path: Path) -> None:
    data, features = _world(tmp_path)
    with pytest.raises(InputError, match="at least 5 kernels"):
        get_predictor("xapp", features=features).fit(data.subset(KERNELS[:3]))
    with pytest.raises(InputError, match="cpu table"):
        get_predictor("xapp", features=features).fit(Dataset(times=data.times))


def test_a_gpu_kernel_is_not_its_input(tmp_path: Path) -> None:
    data, features = _world(tmp_path)
    model = get_predictor("xapp", features=features).fit(data)
    with pytest.raises(InputError, match="kerncast speedup"):
        model.explain_launch(None, None, None)

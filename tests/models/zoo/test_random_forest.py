"""The ``gpu-random-forest`` model (Zhang et al.): variables, fit and variable importance."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from kerncast import InputError
from kerncast.data import Dataset
from kerncast.models import get_predictor
from kerncast.models.zoo._random_forest import FEATURES, forest_features, permutation_importance
from tests.models.zoo.test_components import KEYS


def test_23_variables_none_of_them_time_derived():
    assert len(FEATURES) == 23
    for name in FEATURES:
        assert "time" not in name and "cycles" not in name and "elapsed" not in name


def test_the_variables_of_a_hand_worked_launch():
    row = {"blocks": 99.0, "threads_per_block": 10.0, "static_shared": 1.0, "dynamic_shared": 2.0,
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 5.0,
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": 2.0,
           "smsp__inst_executed.sum": math.e - 1, "gpu__time_duration.sum": 5.0}
    x = dict(zip(FEATURES, forest_features(row)))
    assert x["threads"] == pytest.approx(math.log(1 + 990))      # 99 blocks * 10 threads
    assert x["shared_bytes"] == pytest.approx(math.log(1 + 3))    # static + dynamic
    assert x["shared_bank_conflicts"] == pytest.approx(math.log(1 + 7))
    assert x["smsp__inst_executed.sum"] == pytest.approx(1.0)     # log(1 + e - 1)
    assert x["registers"] == 0.0                                  # absent: 0


class _FirstColumn:
    """A model that predicts its first column: only that column matters."""

    def predict(self, x):
        return np.asarray(x)[:, 0]


def test_permutation_importance_is_the_loss_of_r2():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3))
    imp = permutation_importance(_FirstColumn(), x, x[:, 0], repeats=3, seed=0)
    # R^2 is 1 unshuffled; shuffling column 0 makes the prediction an independent copy of
    # y: R^2 = 1 - 2 var / var = -1, a loss of about 2; the other columns lose nothing
    assert imp[0] == pytest.approx(2.0, abs=0.3)
    assert imp[1] == imp[2] == 0.0


def _dataset(n_kernels: int = 6, configs: int = 8) -> Dataset:
    """Launches whose time is the DRAM bytes over 1e12 B/s; other counters are noise."""
    rng = np.random.default_rng(1)
    times, counters = [], []
    for k in range(n_kernels):
        for j in range(configs):
            key = {"kernel": f"k{k}", **KEYS, "config": f"c{j}"}
            dram = float(10 ** rng.uniform(5, 9))
            times.append({**key, "status": "ok", "time_median_s": dram / 1e12})
            counters.append({**key, "sample_k": 0, "status": "ok", "dram__bytes_read.sum": dram,
                             "smsp__inst_executed.sum": float(rng.uniform(1e5, 1e6))})
    return Dataset(times=pd.DataFrame(times), counters=pd.DataFrame(counters))


def test_the_forest_learns_the_counter_that_sets_the_time_and_says_so():
    data = _dataset()
    model = get_predictor("gpu-random-forest", n_estimators=50).fit(data)
    assert model.n_train_ == 48
    assert model.importance("permutation")[0][0] == "dram__bytes_read.sum"
    assert model.importance("impurity")[0][0] == "dram__bytes_read.sum"
    ratio = model.predict(data) / data.times["time_median_s"].to_numpy()
    assert np.median(np.abs(np.log(ratio))) < 0.3
    explained = model.explain(data)[0]
    assert explained.based_on["importance_permutation"][0][0] == "dram__bytes_read.sum"
    assert 0 < explained.based_on["oob_r2"] <= 1


def test_rows_without_counters_are_nan_and_bad_kinds_are_refused():
    data = _dataset(n_kernels=2, configs=3)
    model = get_predictor("gpu-random-forest", n_estimators=10).fit(data)
    lone = Dataset(times=pd.DataFrame([{"kernel": "x", **KEYS, "status": "ok"}]),
                   counters=data.counters)
    assert np.isnan(model.predict(lone)).all()
    assert model.explain(lone)[0].based_on == {"error": "no counters of this launch"}
    with pytest.raises(InputError, match="permutation, impurity"):
        model.importance("gini")


def test_too_few_launches_to_learn_from():
    data = _dataset(n_kernels=1, configs=1)
    with pytest.raises(InputError, match="at least 2 launches"):
        get_predictor("gpu-random-forest").fit(data)


def test_permutation_importance_is_the_same_in_batches(monkeypatch):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(50, 4))
    whole = permutation_importance(_FirstColumn(), x, x[:, 0], repeats=2, seed=3)
    monkeypatch.setattr("kerncast.models.zoo._random_forest._BATCH_ROWS", 100)  # 1 column
    assert np.allclose(permutation_importance(_FirstColumn(), x, x[:, 0], repeats=2, seed=3),
                       whole)

"""Stargazer's splines, criterion and stepwise selection by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from kerncast import InputError
from kerncast.data import Dataset
from kerncast.models.zoo._stargazer import (
    Stargazer,
    _Gram,
    _stepwise,
    bic,
    launch_parameters,
    rcs_basis,
    rcs_knots,
)
from tests.synthetic import CORPUS_KERNELS, synthetic_dataset


def test_restricted_cubic_spline_by_hand():
    knots = np.array([0.0, 1, 2, 3])
    # term j = (x - t_j)^3+ - (x - t_2)^3+ (t_3 - t_j) / (t_3 - t_2)
    #          + (x - t_3)^3+ (t_2 - t_j) / (t_3 - t_2),  over (t_3 - t_0)^2 = 9
    # x = 1.5: j=0: 1.5^3 = 3.375 / 9 = 0.375; j=1: 0.5^3 = 0.125 / 9
    # x = 4: j=0: 64 - 8 * 3 + 1 * 2 = 42 / 9; j=1: 27 - 8 * 2 + 1 * 1 = 12 / 9
    basis = rcs_basis(np.array([-1.0, 1.5, 4.0, 5.0, 6.0]), knots)
    assert basis.shape == (5, 2)
    assert basis[0] == pytest.approx([0, 0])
    assert basis[1] == pytest.approx([0.375, 0.125 / 9])
    assert basis[2] == pytest.approx([42 / 9, 12 / 9])
    # linear beyond the last knot: 42, 60, 78 (x 1/9) rise by 18 each step
    assert np.diff(basis[2:, 0]) == pytest.approx([18 / 9, 18 / 9])
    assert rcs_basis(np.array([1.0]), np.array([0.0, 1.0])).shape == (1, 0)


def test_knots_are_harrells_quantiles():
    values = np.arange(101.0)
    assert rcs_knots(values, 4) == pytest.approx([5, 35, 65, 95])
    # repeats merge: the 5/35/65% quantiles of 1, 1, 1, 2 are 1; the 95% one lies at
    # position 0.95 * 3 = 2.85: 1 + 0.85 * (2 - 1) = 1.85
    assert rcs_knots(np.array([1.0, 1, 1, 2]), 4) == pytest.approx([1, 1.85])


def test_bic_by_hand():
    # 100 ln(1 / 100) + 2 ln 100 = -460.517 + 9.210 = -451.307
    assert bic(1.0, 100, 2) == pytest.approx(-451.307, abs=1e-3)


def test_stepwise_picks_the_groups_that_explain_and_drops_none_that_do():
    rng = np.random.default_rng(1)
    n = 200
    a, b, c = rng.normal(size=(3, n))
    y = 1 + 2 * a + 0.5 * a**3 + 0.8 * b + 0.01 * rng.normal(size=n)
    x = np.column_stack([np.ones(n), a, a**3, b, c])
    groups = {"a": [1, 2], "b": [3], "c": [4]}
    assert _stepwise(_Gram(x, y), groups, max_steps=10) == ["a", "b"]


def test_parameters_of_a_row():
    row = {"kernel": "copy_vector", "size": "medium", "device": "h100-sxm", "sm_count": 66,
           "tunables": json.dumps({"bx": 256, "vec": 4}), "blocks": 4096,
           "threads_per_block": 256, "block_x": 256, "block_y": 1}
    p = launch_parameters(row, ["bx", "items"])
    # buffers x and y of 4,194,304 floats: 2^25 bytes; 4096 * 256 = 2^20 threads
    assert p["data_bytes"] == 25 and p["threads"] == 20 and p["blocks"] == 12
    assert p["sm_count"] == pytest.approx(math.log2(66))
    assert p["tunable:bx"] == pytest.approx(math.log2(257)) and p["tunable:items"] == 0
    assert p["bandwidth_gbs"] == 3350 and p["fp32_lanes"] == 128
    with pytest.raises(InputError):
        launch_parameters({**row, "kernel": "not_in_the_corpus"}, [])


def test_fit_names_influential_parameters_and_predicts_rows_it_was_fitted_on():
    data = synthetic_dataset(kernels=CORPUS_KERNELS, sm_counts=(33, 66, 132))
    model = Stargazer().fit(data)
    assert model.groups_ and set(model.influence_) == set(model.groups_)
    assert sum(model.influence_.values()) == pytest.approx(1.0)
    # the synthetic times grow as n^3 / SMs: the problem size and the SMs carry them
    top = " ".join(list(model.influence_)[:3])
    assert "data_bytes" in top or "threads" in top
    times = data.ok_times()
    pred = model.predict(Dataset(times=times))
    assert np.median(np.abs(pred / times["time_median_s"].to_numpy() - 1)) < 0.25
    explained = model.explain(Dataset(times=times.head(1)))[0]
    assert list(explained.based_on["most_influential"]) == list(model.influence_)[:3]


def test_rows_outside_the_corpus_are_nan_and_constant_parameters_are_dropped():
    data = synthetic_dataset(kernels=CORPUS_KERNELS)
    model = Stargazer().fit(data)
    assert "bandwidth_gbs" not in model.parameters_  # one device: constant
    assert "sm_count" not in model.parameters_  # the default synthetic data: 132 SMs only
    row = data.ok_times().head(1).assign(kernel="not_in_the_corpus")
    [p] = model.explain(Dataset(times=pd.DataFrame(row)))
    assert math.isnan(p.seconds) and "not_in_the_corpus" in p.based_on["error"]

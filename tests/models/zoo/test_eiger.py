"""Eiger's steps (PCA with varimax, the basis pool, forward selection) by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from kerncast import InputError
from kerncast.data import Dataset
from kerncast.models.work import WorkCounts, _counts
from kerncast.models.zoo._eiger import (
    Eiger,
    basis_pool,
    eiger_metrics,
    forward_select,
    term_values,
    varimax,
)


def test_varimax_undoes_a_rotation_of_a_simple_structure():
    # metrics 0 and 1 load factor 0, metrics 2 and 3 factor 1; rotated by 30 degrees each
    # loads both (row 0: 0.9 cos 30 + 0.1 sin 30 = 0.829, -0.9 sin 30 + 0.1 cos 30 = -0.363);
    # varimax turns them back
    simple = np.array([[0.9, 0.1], [0.8, 0.0], [0.05, 0.85], [0.1, 0.7]])
    c, s = math.cos(math.pi / 6), math.sin(math.pi / 6)
    mixed = simple @ np.array([[c, -s], [s, c]])
    assert mixed[0] == pytest.approx([0.829, -0.363], abs=1e-3)
    rotation = varimax(mixed)
    assert rotation @ rotation.T == pytest.approx(np.eye(2))
    assert np.abs(mixed @ rotation) == pytest.approx(simple, abs=0.01)


def test_the_basis_pool_and_its_terms():
    assert basis_pool(2) == ["lin:0", "sq:0", "log:0", "inv:0", "lin:1", "sq:1", "log:1",
                             "inv:1", "prod:0:1"]
    z = np.array([[0.0, 1.0], [2.0, 3.0], [-1.0, 0.0]])
    lows = np.array([0.0, 1.0])  # the training minimum of each component
    assert term_values(z, lows, "lin:0") == pytest.approx([0, 2, -1])
    assert term_values(z, lows, "sq:1") == pytest.approx([1, 9, 0])
    # u = 1 + max(0, z - low): 1, 3, 1 (flat below the training range)
    assert term_values(z, lows, "log:0") == pytest.approx([0, math.log(3), 0])
    # component 1: u = 1 + max(0, [0, 2, -1]) = 1, 3, 1
    assert term_values(z, lows, "inv:1") == pytest.approx([1, 1 / 3, 1])
    assert term_values(z, lows, "prod:0:1") == pytest.approx([0, 6, 0])


def test_forward_selection_keeps_the_informative_term():
    rng = np.random.default_rng(0)
    n = 60
    x1, x2, x3 = rng.normal(size=(3, n))
    y = 3 + 2 * x1 - 0.5 * x1 * x3 + 0.01 * rng.normal(size=n)
    x = np.column_stack([np.ones(n), x1, x2, x1 * x3, x3])
    groups = np.repeat(np.arange(6), 10)  # six "kernels" of ten rows
    chosen, path = forward_select(x, y, groups, folds=3)
    assert chosen[:3] == [0, 1, 3]  # intercept, then x1, then the product
    assert 2 not in chosen  # noise never lowers the cross-validated error by 1%
    assert path == sorted(path, reverse=True)


_N = {"small": 48, "medium": 512, "large": 2048}


class _Work:
    name, priority, description = "eiger-test-work", -1, "test"

    def counts(self, kernel, config, language="cuda"):
        n = float(_N[config.size])  # the same work for every kernel at a size
        return WorkCounts(2 * n**3, 0, 8 * n**2, 4 * n**2, 10 * n**3, self.name)


def _row(kernel, size, n, tile, seconds, sm_count=132):
    blocks = (n // tile) ** 2
    return {"kernel": kernel, "language": "cuda", "size": size, "device": "h100-sxm",
            "sm_count": sm_count, "tunables": json.dumps({"tile": tile}), "blocks": blocks,
            "threads_per_block": tile * tile, "registers": 32, "static_shared": 0,
            "dynamic_shared": 0, "status": "ok", "time_median_s": seconds}


def test_metrics_of_one_row(monkeypatch):
    monkeypatch.setitem(_counts._PROVIDERS, "eiger-test-work", _Work())
    row = {**_row("matmul_naive", "medium", 512, 16, 1e-3), "tunables": json.dumps({})}
    m = eiger_metrics(row, "eiger-test-work")
    # n = 512: 2 n^3 = 268,435,456 flops -> log2(1 + x) = 28.0; 10 n^3 / (1024 * 256)
    # threads = 5120 instructions per thread -> log2(5121)
    assert m["flops_fp32"] == pytest.approx(math.log2(1 + 2 * 512**3))
    assert m["instructions_per_thread"] == pytest.approx(math.log2(5121))
    # 256 threads of 32 registers: 8 blocks per SM; 1024 blocks / (132 * 8) waves
    assert m["resident_warps"] == 64 and m["waves"] == pytest.approx(math.log2(1 + 1024 / 1056))
    assert m["bandwidth_gbs"] == 3350 and m["sm_count"] == 132


def test_fit_and_predict_follow_a_power_law(monkeypatch):
    """Times that grow as n^3 / SMs are learnt from three kernels and predicted for a fourth."""
    monkeypatch.setitem(_counts._PROVIDERS, "eiger-test-work", _Work())
    rows = []
    for kernel in ("matmul_naive", "matmul_regblock", "transpose_naive", "matmul_tiled"):
        for size, n in _N.items():
            for sm in (32, 66, 132):
                rows.append({**_row(kernel, size, n, 16, 1e-12 * n**3 * 132 / sm + 4e-6, sm),
                             "tunables": "{}"})
    data = Dataset(times=pd.DataFrame(rows))
    train = data.subset(["matmul_naive", "matmul_regblock", "transpose_naive"])
    model = Eiger(work="eiger-test-work").fit(train)
    target = data.subset(["matmul_tiled"])
    pred = model.predict(target)
    measured = target.times["time_median_s"].to_numpy()
    assert np.all(np.abs(pred / measured - 1) < 0.25)
    assert model.terms_ and model.cv_error_path_[-1] < model.cv_error_path_[0]
    assert model.explain(target)[0].based_on["terms"] == model.terms_


def test_rows_without_metrics_are_nan_and_training_needs_two_kernels(monkeypatch):
    monkeypatch.setitem(_counts._PROVIDERS, "eiger-test-work", _Work())
    one = Dataset(times=pd.DataFrame([_row("matmul_naive", "small", 48, 16, 1e-5)]))
    with pytest.raises(InputError, match="at least 2 training kernels"):
        Eiger(work="eiger-test-work").fit(one)
    rows = [{**_row(k, "medium", 512, 16, t), "tunables": "{}"}
            for k, t in (("matmul_naive", 1e-3), ("matmul_tiled", 5e-4))]
    rows += [{**_row(k, "small", 48, 16, t), "tunables": "{}"}
             for k, t in (("matmul_naive", 1e-5), ("matmul_tiled", 8e-6))]
    model = Eiger(work="eiger-test-work", cv=2).fit(Dataset(times=pd.DataFrame(rows)))
    [p] = model.explain(Dataset(times=pd.DataFrame([_row("not_in_the_corpus", "small", 48,
                                                         16, 0.0)])))
    assert math.isnan(p.seconds) and "not_in_the_corpus" in p.based_on["error"]

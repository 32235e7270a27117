"""XAPP's learning side: the seed's metrics on hand-computed examples and Table 4, the
interaction expansion, the two-stage search on a problem with a planted feature set,
persistence and the errors a user gets for bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from kerncast._errors import InputError, NotFittedError
from kerncast.cpu._features import FEATURES
from kerncast.cpu._xapp import (
    KerncastModel,
    MinMax,
    PortClassifier,
    PublishedModel,
    data_bounds,
    fit_baseline,
    group_splits,
    interaction_names,
    interaction_terms,
    load_features,
    mean_relative_error,
    search_feature_sets,
    speedup_dataset,
    speedup_labels,
    weighted_error,
)

# Table 4 of the seed: benchmark, actual and predicted speedup on Platform 1.
TABLE4 = [
    ("bfs1", 5.86, 7.73), ("lavaMD1", 5.9, 35.16), ("needle2", 11.26, 4.45),
    ("hotspot1", 20.96, 29.59), ("nn1", 20.99, 31.7), ("mri-gridding1", 29.63, 30.58),
    ("sgemm1", 29.81, 33.29), ("srad_v13", 39.07, 29.27), ("raycasting", 54.87, 34.34),
    ("sad1", 62.49, 35.52), ("montecarlo1", 272.98, 71.57), ("srad_v11", 276.64, 74.65),
]


def _planted(n_kernels: int = 30, sizes: int = 3, noise: float = 0.05, seed: int = 0):
    """Rows of random features whose log speedup depends on 4 of them with interactions."""
    rng = np.random.default_rng(seed)
    n = n_kernels * sizes
    x = rng.random((n, len(FEATURES)))
    a, b, c, d = (FEATURES.index(f) for f in ("ilp2048", "mem", "locStride128", "Lbdiv64"))
    log_s = (1.0 + 3.0 * x[:, a] + 2.0 * x[:, b] * x[:, c] - 1.5 * x[:, d]
             + 2.0 * x[:, a] * x[:, d] + rng.normal(0, noise, n))
    frame = pd.DataFrame(x, columns=list(FEATURES))
    frame.insert(0, "size", np.tile(["small", "medium", "large"][:sizes], n_kernels))
    frame.insert(0, "kernel", np.repeat([f"k{i:02d}" for i in range(n_kernels)], sizes))
    frame["speedup"] = np.exp(log_s)
    return frame, {FEATURES[i] for i in (a, b, c, d)}


# -- metrics -----------------------------------------------------------------------------

def test_mean_relative_error_by_hand():
    # |12 - 10| / 10 = 0.2, |15 - 20| / 20 = 0.25
    assert mean_relative_error([10, 20], [12, 15]) == pytest.approx(0.225)


def test_weighted_error_by_hand_divides_by_the_count():
    # classes: 10 < 30 (w 1), 50 in 30-100 (w 0.75), 200 > 100 (w 0.5); errors 0.2, 0.2, 0.5
    assert weighted_error([10, 50, 200], [12, 40, 100]) == pytest.approx((0.2 + 0.15 + 0.25) / 3)
    # the bounds belong to the middle class
    assert weighted_error([30, 100], [33, 110]) == pytest.approx(0.75 * 0.1)
    assert weighted_error([10, 50], [11, 55], bounds=(5, 20), weights=(1, 1, 0)) == pytest.approx(0.05)


def test_table4_of_the_seed():
    kept = [(a, p) for name, a, p in TABLE4 if name != "lavaMD1"]
    actual, pred = np.array(kept).T
    assert round(100 * mean_relative_error(actual, pred)) == 41
    assert round(100 * weighted_error(actual, pred)) == 32
    # with lavaMD the plain error is (451 + 496) / 12
    actual, pred = np.array([(a, p) for _, a, p in TABLE4]).T
    assert round(100 * mean_relative_error(actual, pred)) == 79


def test_data_bounds_are_the_terciles():
    assert data_bounds(np.arange(1, 10)) == pytest.approx((np.quantile(np.arange(1, 10), 1 / 3),
                                                           np.quantile(np.arange(1, 10), 2 / 3)))


@pytest.mark.parametrize("args", [
    ([1, 2], [1]),          # lengths differ
    ([1, 0], [1, 1]),       # a zero actual speedup
    ([], []),               # nothing to score
    ([1, 2], [1, np.nan]),  # a prediction that is not a number
])
def test_metrics_refuse_bad_input(args):
    with pytest.raises(InputError):
        mean_relative_error(*args)


def test_weighted_error_refuses_bad_bounds():
    with pytest.raises(InputError):
        weighted_error([1.0], [1.0], bounds=(100, 30))
    with pytest.raises(InputError):
        weighted_error([1.0], [1.0], weights=(1, 1))


# -- the published model -----------------------------------------------------------------

def test_interaction_expansion_has_16_terms():
    x = np.random.default_rng(1).random((5, 4))
    terms = interaction_terms(x)
    assert terms.shape == (5, 16)
    names = interaction_names(["a", "b", "c", "d"])
    assert len(names) == 16 and names[0] == "1" and names[15] == "a*b*c*d"
    for m, name in enumerate(names):
        expected = np.prod([x[:, "abcd".index(f)] for f in name.split("*")], axis=0) if m else 1.0
        assert np.allclose(terms[:, m], expected), name


def test_splits_never_put_a_kernel_on_both_sides():
    groups = np.repeat(np.arange(23), 3).astype(str)
    test = group_splits(groups, n_splits=50, seed=3)
    assert test.shape == (50, 69)
    for row in test:
        assert not set(groups[row]) & set(groups[~row])
        assert len(set(groups[row])) == round(23 * 12 / 92)


def test_the_search_recovers_the_planted_set():
    # 12 random features, y depends on 4 of them with interactions; stage 1 sees 150 of the
    # C(12, 4) = 495 sets, stage 2 all sets of its 8 most frequent features
    rng = np.random.default_rng(11)
    n_kernels, names = 40, [f"x{i}" for i in range(12)]
    x = rng.random((3 * n_kernels, 12))
    a, b, c, d = 1, 4, 7, 10
    y = np.exp(1.0 + 2.0 * x[:, a] + 1.5 * x[:, b] * x[:, c] - 1.0 * x[:, d]
               + 1.5 * x[:, a] * x[:, d] + rng.normal(0, 0.05, len(x)))
    groups = np.repeat(np.arange(n_kernels), 3).astype(str)
    result = search_feature_sets(MinMax.fit(x)(x), y, groups, names, n_random=150, pool_size=8,
                                 n_splits=50, response="log")
    assert set(result.features) == {names[i] for i in (a, b, c, d)}
    assert {names[i] for i in (a, b, c, d)} <= set(result.pool)
    assert result.evaluated == 150 + 70 and result.cv_error < 0.1
    assert result.ranking[0] == (result.features, result.cv_error)


def test_published_model_round_trip_and_explanation():
    frame, planted = _planted(noise=0.05, seed=2)
    model = PublishedModel(n_random=500, n_splits=20, response="auto",
                           responses=("speedup", "log")).fit(frame)
    assert model.response_ == "log" and set(model.features_) == planted
    loaded = PublishedModel.from_dict(json.loads(json.dumps(model.to_dict())))
    assert np.array_equal(loaded.predict(frame), model.predict(frame))
    assert model.predict(frame, "speedup").shape == (len(frame),)
    with pytest.raises(InputError):
        loaded.predict(frame, "speedup")  # the other responses' models are not saved
    why = model.explain(frame.iloc[0])
    assert len(why["terms"]) == 16
    assert sum(t["contribution"] for t in why["terms"]) == pytest.approx(np.log(why["prediction"]))
    assert why["prediction"] == pytest.approx(model.predict(frame.iloc[:1])[0])


# -- kerncast's model and the port classifier --------------------------------------------

@pytest.mark.parametrize("candidates", [("ridge", "ridge-pairs"), ("gbm",)])
def test_kerncast_model_round_trip(candidates):
    frame, _ = _planted(n_kernels=20, noise=0.1, seed=4)
    model = KerncastModel(candidates=candidates, n_folds=3).fit(frame)
    assert model.candidate_ in candidates
    loaded = KerncastModel.from_dict(json.loads(json.dumps(model.to_dict())))
    assert np.array_equal(loaded.predict(frame), model.predict(frame))
    low, high = loaded.predict_interval(frame)
    assert np.all(low < high)
    why = loaded.explain(frame.iloc[3])
    assert why["terms"] and why["prediction"] == pytest.approx(model.predict(frame.iloc[3:4])[0])


def test_saved_trees_predict_as_scikit_learn_does():
    from sklearn.ensemble import HistGradientBoostingRegressor

    from kerncast.cpu._xapp_own import _Trees

    frame, _ = _planted(n_kernels=12, seed=12)
    x = frame[list(FEATURES)].to_numpy()
    fitted = HistGradientBoostingRegressor(max_iter=30, max_depth=3).fit(x, np.log(frame["speedup"]))
    trees = _Trees.from_dict(json.loads(json.dumps(_Trees.of(fitted).to_dict())))
    assert np.allclose(trees.predict(x), fitted.predict(x), rtol=0, atol=1e-12)


def test_kerncast_model_reads_extra_columns():
    frame, _ = _planted(n_kernels=12, noise=0.1, seed=8)
    frame["ops"] = np.exp(np.log(frame["speedup"]) + 5.0)  # a count that tracks the speedup
    model = KerncastModel(candidates=("ridge",), n_folds=3, extra=("ops",)).fit(frame)
    assert model.features[-1] == "ops"
    loaded = KerncastModel.from_dict(json.loads(json.dumps(model.to_dict())))
    assert np.array_equal(loaded.predict(frame), model.predict(frame))
    assert "ops" in loaded.explain(frame.iloc[0])["features"]
    with pytest.raises(InputError, match="ops"):
        loaded.predict(frame.drop(columns=["ops"]))


def test_relative_point_predicts_lower_than_the_median():
    frame, _ = _planted(n_kernels=15, noise=0.4, seed=9)
    median = KerncastModel(candidates=("ridge",), n_folds=3).fit(frame)
    relative = KerncastModel(candidates=("ridge",), n_folds=3, point="relative").fit(frame)
    assert np.allclose(median.predict(frame), median.predict_median(frame))
    assert relative.shift_ < 0
    assert np.allclose(relative.predict(frame), relative.predict_median(frame) * np.exp(relative.shift_))
    with pytest.raises(InputError):
        KerncastModel(point="mean").fit(frame)


def test_long_tailed_features_are_used_as_logs():
    frame, _ = _planted(n_kernels=10, seed=10)
    frame["memInt"] = np.exp(-12 * frame["memInt"])  # five orders of magnitude
    frame["mem"] = 0.2 + 0.1 * frame["mem"]  # within a factor 1.5
    model = KerncastModel(candidates=("ridge",), n_folds=3).fit(frame)
    assert model.fitted_ is not None and model.fitted_.prep is not None
    floor = dict(zip(FEATURES, model.fitted_.prep.floor))
    assert floor["memInt"] == pytest.approx(frame["memInt"].min())
    assert np.isnan(floor["mem"])
    zero = frame.iloc[:1].copy()
    zero["memInt"] = 0.0  # below the training range: raised to the floor, not log(0)
    assert np.isfinite(model.predict(zero)).all()


def test_kerncast_model_beats_a_constant_held_out():
    frame, _ = _planted(n_kernels=30, noise=0.1, seed=5)
    train, test = frame[frame["kernel"] < "k24"], frame[frame["kernel"] >= "k24"]
    model = KerncastModel(candidates=("ridge-pairs",), n_folds=3).fit(train)
    constant = np.full(len(test), np.exp(np.log(train["speedup"]).median()))
    assert (mean_relative_error(test["speedup"], model.predict(test))
            < mean_relative_error(test["speedup"], constant))


@pytest.mark.parametrize("method", ["logistic", "regression", "majority"])
def test_port_classifier_round_trip(method):
    frame, _ = _planted(n_kernels=20, noise=0.1, seed=6)
    threshold = float(frame["speedup"].median())
    model = PortClassifier(threshold=threshold, method=method, n_folds=3).fit(frame)
    said = model.predict(frame)
    expected = 0.45 if method == "majority" else 0.8
    assert said.dtype == bool and np.mean(said == (frame["speedup"] > threshold)) > expected
    loaded = PortClassifier.from_dict(json.loads(json.dumps(model.to_dict())))
    assert np.array_equal(loaded.predict(frame), said)


def test_baselines_predict_speedups():
    frame, _ = _planted(n_kernels=15, seed=7)
    for method in ("ols", "wls"):
        pred = fit_baseline(method, "log", frame).predict(frame)
        assert pred.shape == (len(frame),) and np.all(pred > 0)


# -- the data and bad input --------------------------------------------------------------

def test_labels_join_cpu_and_gpu_times():
    labels, report = speedup_labels("h100", "default")
    assert report.labels == len(labels) > 150
    assert np.allclose(labels["speedup"], labels["cpu_s"] / labels["gpu_s"])
    assert (labels["config"] == labels["gpu_config"]).all()
    best, _ = speedup_labels("h100", "best")
    merged = labels.merge(best, on=["kernel", "size"], suffixes=("", "_best"))
    assert (merged["gpu_s_best"] <= merged["gpu_s"]).all()


def test_speedup_dataset_on_a_features_file(tmp_path):
    labels, _ = speedup_labels("h100", "default")
    rows = labels[["kernel", "size"]].head(9).copy()
    for i, f in enumerate(FEATURES):
        rows[f] = float(i)
    rows["hostname"] = "provenance, ignored"
    path = tmp_path / "features.parquet"
    rows.to_parquet(path)
    data = speedup_dataset("h100", "default", path)
    assert list(data.columns) == ["kernel", "size", *FEATURES, "cpu_s", "gpu_s", "speedup"]
    assert len(data) == 9
    rows.drop(columns=["mem"]).to_parquet(path)
    with pytest.raises(InputError, match="mem"):
        load_features(path)


def test_bad_input_raises_the_input_error(tmp_path):
    with pytest.raises(InputError, match="h100"):
        speedup_dataset("h1000")
    with pytest.raises(InputError, match="variant"):
        speedup_dataset("h100", "fastest")
    with pytest.raises(InputError, match="profile"):
        speedup_dataset("h100", "default", tmp_path / "missing.parquet")
    frame, _ = _planted(n_kernels=6)
    with pytest.raises(InputError):
        PublishedModel(response="cube").fit(frame)
    with pytest.raises(InputError):
        KerncastModel(candidates=("forest",)).fit(frame)
    with pytest.raises(InputError):
        PortClassifier(threshold=0).fit(frame)
    broken = frame.copy()
    broken.loc[0, "mem"] = np.nan
    with pytest.raises(InputError, match="mem"):
        KerncastModel().fit(broken)
    with pytest.raises(InputError):
        KerncastModel().fit(frame.drop(columns=["speedup"]))
    with pytest.raises(NotFittedError):
        PublishedModel().predict(frame)
    with pytest.raises(InputError):
        KerncastModel.from_dict({"kind": "something else"})
    with pytest.raises(InputError, match="fit it again"):
        KerncastModel.from_dict({"kind": "kerncast-speedup", "params": {}})  # an older layout

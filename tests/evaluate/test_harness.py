"""The evaluation harness: splits, hidden targets, failures as data, tables."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from kerncast import InputError
from kerncast.data import Dataset
from kerncast.models import list_predictors
from kerncast.evaluate import evaluate, survey_kernels
from kerncast.models import Predictor
from tests.synthetic import CORPUS_KERNELS, FAKE_KERNELS, evaluated_synthetic, synthetic_dataset


class _Spy(Predictor):
    """Predicts 1 ms and records which kernels it saw in fit and predict."""

    name = "spy-for-tests"
    learned = True
    seen: list = []

    def __init__(self, *, mode: str = "ok"):
        self.mode = mode

    def _fit(self, dataset):
        if self.mode == "fit-fails":
            raise RuntimeError("cannot learn")
        self.train_ = sorted(set(dataset.times["kernel"]))

    def _predict(self, dataset):
        t = dataset.times
        _Spy.seen.append((self.train_, sorted(set(t["kernel"])), list(t.columns)))
        if self.mode == "nan":
            return np.full(len(t), np.nan)
        if self.mode == "fails-on-stream" and "synthetic_stream" in set(t["kernel"]):
            raise ZeroDivisionError("stream is hard")
        return np.full(len(t), 1e-3)


class _NeedsSamples(_Spy):
    name = "needs-samples-for-tests"
    needs = frozenset({"sampled_runs"})


@pytest.fixture(scope="module")
def data():
    return synthetic_dataset()


@pytest.fixture(scope="module")
def result():
    return evaluated_synthetic()


@pytest.mark.parametrize("folds", ["kernel", 2, 3])
def test_no_kernel_is_on_both_sides_and_targets_are_hidden(data, folds):
    _Spy.seen = []
    result = evaluate(data, [_Spy()], folds=folds)
    assert len(_Spy.seen) == len(data.kernels())
    for train, test, columns in _Spy.seen:
        assert test and not set(train) & set(test)
        assert not [c for c in columns if c.startswith("time_")]
    assert sorted(result.predictions["kernel"].unique()) == data.kernels()


def test_only_successful_rows_are_targets(data, result):
    ok = data.ok_times()
    for model in result.models:
        assert (result.predictions["model"] == model).sum() == len(ok)
    assert "bx=9999" not in set(result.predictions["config"])


def test_a_model_failing_on_kernels_is_recorded_and_the_rest_goes_on(result):
    per = result.per_kernel.set_index(["model", "kernel"])
    for kernel in FAKE_KERNELS:
        row = per.loc[("roofline", kernel)]
        assert row["failed"] == row["rows"] > 0
        assert row["error"].startswith(f"InputError: no corpus kernel '{kernel}'")
    for kernel in CORPUS_KERNELS:
        assert per.loc[("roofline", kernel), "failed"] == 0
    roofline = result.per_model.set_index("model").loc["roofline"]
    assert roofline["failed_kernels"] == 2 and roofline["predicted"] + roofline["failed"] == roofline["rows"]
    # beside the fake kernels only models this dataset cannot serve fail (xapp has no cpu
    # table here, the learned ones that need two training kernels of the corpus)
    fails = result.failures()
    assert set(fails[fails["model"].isin(_serving(result))]["kernel"]) == set(FAKE_KERNELS)


def _serving(result) -> set[str]:
    """Models that predicted some row of the synthetic dataset."""
    pm = result.per_model
    return set(pm.loc[pm["predicted"] > 0, "model"])


def test_exceptions_nans_and_fit_failures_become_failed_rows(data):
    result = evaluate(data, [_Spy(mode="fails-on-stream")])
    bad = result.predictions[~result.predictions["ok"]]
    assert set(bad["kernel"]) == {"synthetic_stream"}
    assert set(bad["error"]) == {"ZeroDivisionError: stream is hard"}
    nan = evaluate(data, [_Spy(mode="nan")]).predictions
    assert not nan["ok"].any()
    assert set(nan["error"]) == {"no usable prediction (NaN, infinite or not positive)"}
    fit = evaluate(data, [_Spy(mode="fit-fails")])
    assert set(fit.predictions["error"]) == {"fit failed: RuntimeError: cannot learn"}
    assert fit.fits["error"].notna().all() and len(fit.fits) == len(data.kernels())


def test_unmet_needs_are_recorded_without_calling_the_model(data):
    _Spy.seen = []
    no_samples = replace(data, samples=data.samples.iloc[0:0])
    result = evaluate(no_samples, [_NeedsSamples()], kernels=["matmul_naive", "matmul_tiled"])
    assert not _Spy.seen
    assert result.per_kernel["error"].str.startswith(
        "needs sampled_runs: the dataset's samples table has no rows for").all()


def test_tables_agree_with_the_predictions(result):
    for model, pred in result.predictions.groupby("model"):
        ok = pred[pred["ok"]]
        if ok.empty:
            continue
        row = result.per_model.set_index("model").loc[model]
        assert row["mape_pct"] == pytest.approx(ok["ape_pct"].mean())
        assert row["within_25_pct"] == pytest.approx(100 * (ok["ape_pct"] <= 25).mean())
        ape = 100 * abs(ok["predicted_s"] - ok["measured_s"]) / ok["measured_s"]
        assert np.allclose(ape, ok["ape_pct"])
    groups = result.groups
    assert set(groups.columns) >= {"model", "kernel", "size", "spearman", "regret_pct"}
    # the roofline's emulator counts differ from config to config: it ranks them
    assert groups.loc[groups["model"] == "roofline", "spearman"].notna().any()


def test_timings_and_explanations_are_recorded(result):
    pm = result.per_model.set_index("model")
    assert (pm.loc[sorted(_serving(result)), "s_per_prediction"] > 0).all() and (pm["fit_s"] >= 0).all()
    roof = result.predictions[(result.predictions["model"] == "roofline") & result.predictions["ok"]]
    assert set(roof["bottleneck"]) <= {"compute", "memory"}
    assert set(roof["work"]) == {"emulator"}


def test_comparison_table_is_the_surveys_table_2(result):
    comp = result.comparison.set_index("model")
    assert list(result.comparison.columns) == [
        "model", "accuracy_mape_pct", "accuracy_within_25_pct", "construction_fit_s",
        "construction_must_measure", "evaluation_s_per_prediction", "needs", "insight"]
    assert comp.loc["roofline", "construction_must_measure"] == "nothing"
    assert comp.loc["launch-regression", "construction_must_measure"] == "times of training kernels"
    assert comp.loc["roofline", "needs"] == "the kernel's source code, the device's spec sheet"


def test_survey_kernels_are_found_by_tag_or_name(result):
    assert survey_kernels(["matmul_naive", "hotspot_2d", "graph_bfs_level", "vadd"]) == {
        "MM": ["matmul_naive"], "HotSpot": ["hotspot_2d"], "BFS": ["graph_bfs_level"]}
    assert set(result.survey["benchmark"]) == {"MM"}
    assert set(result.survey["kernel"]) == set(CORPUS_KERNELS)


def test_held_out_test_dataset(data):
    train = data.subset(["synthetic_stream", "matmul_naive"])
    test = data.subset(["synthetic_stencil", "matmul_tiled"])
    _Spy.seen = []
    result = evaluate(train, [_Spy()], test=test)
    assert result.folds == "held-out"
    assert {tuple(s[0]) for s in _Spy.seen} == {("matmul_naive", "synthetic_stream")}
    assert set(result.predictions["kernel"]) == {"synthetic_stencil", "matmul_tiled"}


def test_selection_by_kernel_and_size(data):
    result = evaluate(data, ["launch-regression"], kernels="matmul_naive,synthetic_stream",
                      sizes=["medium"])
    assert set(result.predictions["kernel"]) == {"matmul_naive", "synthetic_stream"}
    assert set(result.predictions["size"]) == {"medium"}


def test_to_dict_is_strict_json(result):
    text = json.dumps(result.to_dict(), allow_nan=False)
    back = json.loads(text)
    assert {r["model"] for r in back["per_model"]} == set(list_predictors())


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"models": "rooflin"}, "unknown model 'rooflin'; did you mean roofline?"),
    ({"models": ""}, "no models given; choose from: "),
    ({"models": "roofline,roofline"}, "model names repeat"),
    ({"kernels": ["nope"]}, "kernel(s) nope not in synthetic; it has: matmul_naive, "),
    ({"sizes": ["huge"]}, "size(s) huge not in synthetic; it has: medium, small"),
    ({"folds": "leave-one-out"}, "folds must be 'kernel'"),
])
def test_bad_input_is_refused_in_one_line(data, kwargs, message):
    kwargs = {"models": "all", **kwargs}
    with pytest.raises(InputError) as err:
        evaluate(data, kwargs.pop("models"), **kwargs)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_datasets_without_rows_or_columns_are_refused(data):
    with pytest.raises(InputError, match="synthetic has no timing rows"):
        evaluate(replace(data, times=pd.DataFrame()), "all")
    with pytest.raises(InputError, match="lacks the column\\(s\\) status, time_median_s"):
        evaluate(replace(data, times=data.times.drop(columns=["status", "time_median_s"])),
                 "roofline")
    with pytest.raises(InputError, match="lacks the column\\(s\\) blocks in its times table"):
        evaluate(replace(data, times=data.times.drop(columns=["blocks"])), "launch-regression")
    failed = data.times.assign(status="timeout")
    with pytest.raises(InputError, match="has no successful timing rows"):
        evaluate(replace(data, times=failed), "all")
    with pytest.raises(InputError, match="take a kerncast Dataset|has no timing rows"):
        evaluate(Dataset(times=pd.DataFrame({"kernel": []})), "all")


class _Recording:
    """An executor that runs its items here, as a pool would, and notes their order."""

    name = "recording"

    def __init__(self):
        self.order: list[str] = []

    def map(self, fn, items, shared=None):
        for index, item in reversed(list(enumerate(items))):  # results come back in any order
            self.order.append(item[1].name)
        for index, item in reversed(list(enumerate(items))):
            yield index, fn(shared, item)


def test_fanned_folds_start_with_the_most_rows_and_merge_in_serial_order(data):
    executor = _Recording()
    fanned = evaluate(data, [_Spy()], executor=executor)
    serial = evaluate(data, [_Spy()])
    counts = data.times["kernel"].value_counts()
    submitted = [counts[name.removeprefix("without ")] for name in reversed(executor.order)]
    assert submitted == sorted(submitted, reverse=True)
    columns = [c for c in serial.predictions if c not in ("predict_s", "seconds")]
    pd.testing.assert_frame_equal(fanned.predictions[columns], serial.predictions[columns])

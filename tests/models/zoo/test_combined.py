"""The ``combined`` model: stacking two fake bases that are each right on a different half
of the kernels, held out by kernel, and its persistence and refusals.

The dataset here is made up (a formula, never measured): twelve kernels ``k00``..``k11``,
each with launches of 64..4096 blocks whose time is ``scale(kernel) * blocks``; the kernels
of one half run blocks of 128 threads, the others of 512 (what tells the halves apart).
"""

from __future__ import annotations

import json
import zlib

import numpy as np
import pandas as pd
import pytest

from kerncast import InputError
from kerncast.data import Dataset
from kerncast.evaluate import evaluate, hide_targets
from kerncast.models import Predictor, get_predictor
from kerncast.models.registry import _REGISTRY
from kerncast.models.zoo._combined import (
    Combined,
    Plan,
    blend_fit,
    default_bases,
    fit_experts,
    forward_select,
    simplex,
)

KERNELS = tuple(f"k{i:02d}" for i in range(12))
HALF_A = frozenset(KERNELS[::2])
BLOCKS = (64, 256, 1024, 4096)


def _scale(kernel: str) -> float:
    return 1e-8 * (1 + int(kernel[1:]))


def _truth(row: dict) -> float:
    return _scale(row["kernel"]) * float(row["blocks"])


def _noise(row: dict) -> float:
    """A factor between 1/3 and 3, fixed per launch (a base's mistake where it is wrong)."""
    u = zlib.crc32(f"{row['kernel']}/{row['config']}".encode()) / 2**32
    return float(np.exp((2 * u - 1) * np.log(3.0)))


def fake_dataset() -> Dataset:
    rows = [{"kernel": k, "language": "cuda", "size": "small", "config": f"b={b}",
             "tunables": json.dumps({"b": b}), "device": "h100-sxm", "sm_count": 132,
             "blocks": b, "threads_per_block": 128 if k in HALF_A else 512, "status": "ok",
             "time_median_s": _scale(k) * b}
            for k in KERNELS for b in BLOCKS]
    return Dataset(times=pd.DataFrame(rows), name="fake")


class _Fake(Predictor):
    """A base that is exact on the kernels of ``right`` and off by :func:`_noise` on the
    others (or silent there, with ``silent``)."""

    needs = frozenset()
    description = "a made-up base for tests"
    insight = "none"
    learned = False
    columns = ("kernel", "config", "blocks")
    right: frozenset = frozenset()
    silent = False

    def _predict(self, dataset: Dataset) -> np.ndarray:
        out = []
        for row in dataset.times.to_dict("records"):
            if row["kernel"] in self.right:
                out.append(_truth(row))
            else:
                out.append(np.nan if self.silent else _truth(row) * _noise(row))
        return np.array(out, dtype=float)


class RightOnA(_Fake):
    name = "fake-right-on-a"
    right = HALF_A


class RightOnB(_Fake):
    name = "fake-right-on-b"
    right = frozenset(KERNELS) - HALF_A


class OnlyA(_Fake):
    name = "fake-only-a"
    right = HALF_A
    silent = True


@pytest.fixture
def fakes(monkeypatch):
    """The fake bases, registered for one test only."""
    for cls in (RightOnA, RightOnB, OnlyA):
        monkeypatch.setitem(_REGISTRY, cls.name, cls)
    return fake_dataset()


def _mape(result, model: str) -> float:
    return float(result.per_model.set_index("model").loc[model, "mape_pct"])


def test_beats_both_bases_held_out_by_kernel(fakes):
    combined = Combined(bases=(RightOnA.name, RightOnB.name))
    result = evaluate(fakes, [combined, RightOnA.name, RightOnB.name], folds="kernel")
    a, b, c = (_mape(result, m) for m in (RightOnA.name, RightOnB.name, "combined"))
    assert result.per_model.set_index("model").loc["combined", "failed"] == 0
    # each base is exact on half the launches and off by up to 3x on the other half: no
    # blend of the two beats them by much, a choice by the launch's block size is exact
    assert c < 0.2 * min(a, b), (a, b, c)
    model = combined.fit(fakes)
    p = model.explain(hide_targets(fakes, "k01")[0])[0]
    assert p.based_on["how"] == "select" and p.based_on["weights"] == {RightOnB.name: 1.0}


def test_a_base_that_answers_only_where_it_is_right_takes_those_launches(fakes):
    combined = Combined(bases=(OnlyA.name, RightOnB.name))
    result = evaluate(fakes, [combined, RightOnB.name], folds="kernel")
    pred = result.predictions[result.predictions["model"] == "combined"]
    on_a = pred[pred["kernel"].isin(HALF_A)]
    assert on_a["ape_pct"].max() < 1e-6  # the expert of both answering picks the exact base
    assert _mape(result, "combined") < 0.6 * _mape(result, RightOnB.name)


def test_explanations_name_the_bases_and_weights(fakes):
    model = Combined(bases=(OnlyA.name, RightOnB.name)).fit(fakes)
    shown, _ = hide_targets(fakes, "k00")
    p = model.explain(shown)[0]
    assert p.model == "combined" and p.seconds == pytest.approx(_scale("k00") * BLOCKS[0])
    assert set(p.based_on["bases"]) == {OnlyA.name, RightOnB.name}
    assert p.based_on["weights"] and set(p.based_on["weights"]) <= set(p.based_on["bases"])
    assert p.based_on["pattern"] == sorted([OnlyA.name, RightOnB.name])


def test_nan_only_where_no_base_answers(fakes):
    model = Combined(bases=(OnlyA.name,)).fit(fakes)
    for kernel, answered in (("k00", True), ("k01", False)):
        shown, _ = hide_targets(fakes, kernel)
        assert np.isfinite(model.predict(shown)).all() == answered
    explained = model.explain(hide_targets(fakes, "k01")[0])
    assert "no base" in explained[0].based_on["error"]


def test_save_and_load_give_the_same_predictions(fakes, tmp_path):
    bases = (OnlyA.name, RightOnB.name, "launch-regression")  # one scikit-learn base
    model = Combined(bases=bases).fit(fakes)
    path = tmp_path / "combined.json"
    model.save(path)
    loaded = Predictor.load(path)
    assert isinstance(loaded, Combined) and loaded.get_params() == model.get_params()
    shown, _ = hide_targets(fakes, "k03")
    assert np.array_equal(loaded.predict(shown), model.predict(shown))
    assert [p.based_on for p in loaded.explain(shown)] == [p.based_on for p in model.explain(shown)]
    assert [{k: v for k, v in e.items() if k != "selector"} for e in loaded.experts_] == \
        [{k: v for k, v in e.items() if k != "selector"} for e in model.experts_]


def test_no_row_of_a_held_out_kernel_reaches_a_base_fit(fakes, monkeypatch):
    """The inner split is by kernel: a learned base never predicts a kernel it saw."""
    seen: list[tuple[set, set]] = []
    fit, predict = Predictor.fit, Predictor.predict

    def spy_fit(self, dataset):
        self._spy_kernels = set(dataset.times["kernel"])
        return fit(self, dataset)

    def spy_predict(self, dataset):
        if self.name == "launch-regression":
            seen.append((self._spy_kernels, set(dataset.times["kernel"])))
        return predict(self, dataset)

    monkeypatch.setattr(Predictor, "fit", spy_fit)
    monkeypatch.setattr(Predictor, "predict", spy_predict)
    Combined(bases=("launch-regression",), inner_folds=3).fit(fakes.subset(KERNELS[:9]))
    inner = [(train, test) for train, test in seen]
    assert len(inner) == 9  # three inner folds of three kernels, each predicted by kernel
    assert all(not (train & test) for train, test in inner)


def test_refusals_say_what_to_do(fakes):
    with pytest.raises(InputError, match="--model"):
        Combined().explain_launch(None, None, None)
    with pytest.raises(InputError, match="no-such-model"):
        Combined(bases=("no-such-model",)).fit(fakes)
    with pytest.raises(InputError, match="its own bases"):
        Combined(bases=("combined",)).fit(fakes)
    with pytest.raises(InputError, match="at least 2 training kernels"):
        Combined(bases=(RightOnA.name,)).fit(fakes.subset(["k00"]))
    with pytest.raises(InputError, match="loss must be"):
        Combined(bases=(RightOnA.name,), loss="mse").fit(fakes)


def test_default_bases_leave_out_the_slow_models_but_static():
    names = default_bases()
    assert "combined" not in names and "mwp-cwp" not in names
    assert {"launch-regression", "qa", "sampling", "static"} <= set(names)
    assert get_predictor("combined").bases is None


def test_blend_fits_by_hand():
    assert simplex(1).tolist() == [[1.0]]
    assert len(simplex(2)) == 21 and len(simplex(3)) == 231
    assert np.allclose(simplex(3).sum(axis=1), 1.0) and (simplex(3) >= 0).all()
    # y = 0.5 + 0.25 x0 + 0.75 x1 exactly: both losses find the weights and the factor
    x = np.array([[0.0, 0.0], [0.0, 4.0], [4.0, 0.0], [2.0, 2.0], [1.0, 3.0]])
    y = 0.5 + 0.25 * x[:, 0] + 0.75 * x[:, 1]
    for loss in ("mape", "log"):
        assert blend_fit(x, y, loss) == pytest.approx([0.5, 0.25, 0.75])


def test_the_factor_minimises_the_loss_it_is_fitted_for():
    # one prediction, right on three launches and 4x too low on two
    x = np.zeros((5, 1))
    y = np.log([1.0, 1.0, 1.0, 4.0, 4.0])
    # log loss: the median ratio, 1; mape: ratios 1, 1, 1, 4, 4 weighted by 1/ratio
    # (1, 1, 1, 0.25, 0.25): the weighted median is 1 as well, and the factor 4 would
    # cost 3 * 300% against 2 * 75%
    assert blend_fit(x, y, "log")[0] == pytest.approx(0.0)
    assert blend_fit(x, y, "mape")[0] == pytest.approx(0.0)
    # right on two, 4x too low on three: the median says 4x, the MAPE still says 1x
    # (2 * 300% = 600% against 3 * 75% = 225%)
    y = np.log([1.0, 1.0, 4.0, 4.0, 4.0])
    assert blend_fit(x, y, "log")[0] == pytest.approx(np.log(4.0))
    assert blend_fit(x, y, "mape")[0] == pytest.approx(0.0)


def test_forward_selection_keeps_the_useful_base():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(8), 10)
    y = rng.normal(size=80)
    x = np.column_stack([y + rng.normal(scale=0.01, size=80), rng.normal(size=80)])
    terms, error = forward_select(x, y, groups, Plan(folds=4, max_terms=2))
    assert terms == [0] and error < 5.0
    experts = fit_experts(x, y, groups, ["good", "noise"], Plan(folds=4, max_terms=2))
    assert len(experts) == 1 and experts[0]["pattern"] == ["good", "noise"]
    assert experts[0]["kernels"] == 8 and experts[0]["held_out_error"] < 5.0
    if experts[0]["kind"] == "blend":
        assert experts[0]["terms"] == ["good"]


def test_answers_of_a_model_that_learns_nothing_are_asked_once_per_kernel(fakes, monkeypatch):
    from kerncast.models.zoo import _combined

    monkeypatch.setattr(_combined, "_MEMO", {})
    calls: list[int] = []
    original = RightOnA._predict

    def counted(self, dataset):
        calls.append(len(dataset.times))
        return original(self, dataset)

    monkeypatch.setattr(RightOnA, "_predict", counted)
    model = RightOnA().fit(fakes)
    first, _ = _combined.base_answers(model, fakes)
    again, _ = _combined.base_answers(model, fakes)
    assert len(calls) == len(KERNELS)  # the second pass read every kernel back
    np.testing.assert_array_equal(first, again)
    changed = fake_dataset()
    changed.times.loc[changed.times["kernel"] == "k00", "blocks"] *= 2
    _combined.base_answers(model, changed)
    assert len(calls) == len(KERNELS) + 1  # only the changed kernel is asked again

"""The Predictor base class, Prediction and JSON persistence."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Ridge

from kerncast import InputError, NotFittedError
from kerncast.data import Dataset
from kerncast.models import Prediction, Predictor
from kerncast._persist import decode, encode


class _Constant(Predictor):
    name = "constant-for-tests"
    columns = ("kernel",)

    def __init__(self, *, seconds: float = 1e-3, rows: int | None = None):
        self.seconds = seconds
        self.rows = rows

    def _predict(self, dataset):
        return np.full(self.rows if self.rows is not None else len(dataset.times), self.seconds)


def _data(n=3):
    return Dataset(times=pd.DataFrame({"kernel": ["k"] * n}))


def test_fit_marks_the_model_fitted_and_predict_checks_the_shape():
    model = _Constant()
    with pytest.raises(NotFittedError, match="constant-for-tests.*call fit"):
        model.predict(_data())
    assert model.fit(_data()).fitted_ is True
    assert model.predict(_data(4)).tolist() == [1e-3] * 4
    with pytest.raises(ValueError, match="returned \\(2,\\) predictions for 3 rows"):
        _Constant(rows=2).fit(_data()).predict(_data())


def test_predictors_take_datasets_only():
    with pytest.raises(InputError, match="take a kerncast Dataset, not DataFrame"):
        _Constant().fit(pd.DataFrame())


def test_default_explain_gives_seconds_only():
    (p,) = _Constant().fit(_data(1)).explain(_data(1))
    assert p == Prediction(seconds=1e-3, model="constant-for-tests")
    assert p.bottleneck == "unknown" and p.to_dict()["breakdown"] == {}


def test_prediction_breakdown_keys_are_checked():
    with pytest.raises(ValueError, match="'cache'"):
        Prediction(seconds=1.0, model="m", breakdown={"cache": 1.0})


def test_from_dict_refuses_what_is_not_a_saved_model(tmp_path):
    with pytest.raises(InputError, match="not a saved kerncast model"):
        Predictor.from_dict({"name": "roofline"})
    bad = tmp_path / "m.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="cannot read the saved model"):
        Predictor.load(bad)


def test_from_dict_checks_the_class():
    from kerncast.models import LaunchRegression, Roofline

    saved = Roofline().fit(_data()).to_dict()
    with pytest.raises(InputError, match="is 'roofline', not 'launch-regression'"):
        LaunchRegression.from_dict(saved)
    assert isinstance(Roofline.from_dict(saved), Roofline)


def test_encode_round_trips_arrays_tuples_sets_and_keys():
    value = {"a": np.arange(6, dtype=np.int16).reshape(2, 3), "t": (1, 2.5), "s": {"x", "y"},
             "k": {3: "three", (1, 2): "pair"}, "n": np.float64(2.0), "l": [None, True]}
    back = decode(json.loads(json.dumps(encode(value))))
    assert back["a"].dtype == np.int16 and np.array_equal(back["a"], value["a"])
    assert back["t"] == (1, 2.5) and back["s"] == frozenset({"x", "y"})
    assert back["k"] == {3: "three", (1, 2): "pair"} and back["n"] == 2.0
    assert back["l"] == [None, True]


def test_encode_stores_sklearn_objects_with_skops():
    model = Ridge(alpha=0.5).fit(np.arange(8.0).reshape(4, 2), np.arange(4.0))
    data = json.loads(json.dumps(encode({"m": model})))
    assert set(data["m"]) == {"__skops__"}
    back = decode(data)["m"]
    assert np.allclose(back.predict([[1.0, 2.0]]), model.predict([[1.0, 2.0]]))


def test_encode_refuses_other_objects():
    with pytest.raises(TypeError, match="without pickle"):
        encode(object())


def test_a_missing_skops_is_a_clear_error(monkeypatch):
    import sys

    from sklearn.preprocessing import StandardScaler

    from kerncast._errors import ToolchainError

    encoded = encode(StandardScaler().fit([[0.0], [1.0]]))
    monkeypatch.setitem(sys.modules, "skops.io", None)
    monkeypatch.setitem(sys.modules, "skops", None)
    with pytest.raises(ToolchainError, match="pip install skops"):
        decode(encoded)


def test_parameters_follow_scikit_learns_protocol():
    """get_params/set_params/clone/repr work without deriving from BaseEstimator."""
    from sklearn.base import clone

    model = _Constant(seconds=2e-3)
    assert model.get_params() == {"rows": None, "seconds": 2e-3}
    assert repr(model) == "_Constant(seconds=0.002)" and repr(_Constant()) == "_Constant()"
    assert model.set_params(rows=4) is model and model.rows == 4
    copy = clone(model)
    assert copy is not model and copy.get_params() == model.get_params()
    with pytest.raises(InputError, match="has no parameter 'row'; its parameters are: rows, seconds"):
        model.set_params(row=1)


def test_nested_parameters_are_reached_with_double_underscores():
    class _Outer(Predictor):
        name = "outer-for-tests"

        def __init__(self, *, inner: Predictor | None = None, scale: float = 1.0):
            self.inner = inner
            self.scale = scale

    outer = _Outer(inner=_Constant(seconds=1.0))
    assert outer.get_params()["inner__seconds"] == 1.0
    assert "inner__seconds" not in outer.get_params(deep=False)
    outer.set_params(inner__seconds=3.0)
    assert outer.inner.seconds == 3.0


"""The contract every registered predictor keeps (in the style of scikit-learn's common tests).

Runs each model of the registry through the same checks: unfitted models refuse to
predict, ``__init__`` only stores parameters, fitting is repeatable, ``clone`` works,
save/load without pickle gives identical predictions, ``needs`` stay within the allowed
set and predictions are positive and finite on a (synthetic) dataset the model can handle.
"""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest
from sklearn.base import clone

from kerncast import NotFittedError
from kerncast.models import BREAKDOWN_KEYS, NEEDS, Prediction, Predictor, get_predictor, list_predictors
from kerncast.models.registry import predictor_class
from tests.synthetic import CORPUS_KERNELS, synthetic_dataset

MODELS = list_predictors()
#: Needs the synthetic dataset can serve; extend tests/synthetic.py for the others.
SERVED = {"source", "spec", "sampled_runs", "counters"}


@pytest.fixture(scope="module")
def data():
    return synthetic_dataset(kernels=CORPUS_KERNELS)


def _usable(name: str, data):
    unmet = predictor_class(name).needs - SERVED
    if unmet:
        pytest.skip(f"the synthetic dataset has no {', '.join(sorted(unmet))}; "
                    "extend tests/synthetic.py to check this model")
    return data


def _targets(data):
    from kerncast.evaluate import hide_targets

    shown, _ = hide_targets(data, CORPUS_KERNELS[1])
    return shown


def test_some_models_are_registered():
    assert {"roofline", "launch-regression"} <= set(MODELS)


@pytest.mark.parametrize("name", MODELS)
def test_declares_name_needs_and_descriptions(name):
    cls = predictor_class(name)
    assert issubclass(cls, Predictor) and cls.name == name
    assert isinstance(cls.needs, frozenset) and cls.needs <= set(NEEDS)
    assert cls.description and cls.insight
    assert isinstance(cls.learned, bool) and all(isinstance(c, str) for c in cls.columns)


@pytest.mark.parametrize("name", MODELS)
def test_init_only_stores_keyword_parameters(name):
    cls = predictor_class(name)
    params = [p for p in inspect.signature(cls.__init__).parameters.values() if p.name != "self"]
    assert all(p.kind is p.KEYWORD_ONLY for p in params)
    model = cls()
    assert set(vars(model)) == {p.name for p in params}
    assert model.get_params() == {p.name: p.default for p in params}
    assert not [k for k in vars(model) if k.endswith("_")]


@pytest.mark.parametrize("name", MODELS)
def test_refuses_to_predict_before_fit(name, data):
    model = get_predictor(name)
    with pytest.raises(NotFittedError, match="not fitted"):
        model.predict(_targets(data))
    with pytest.raises(NotFittedError):
        model.to_dict()


@pytest.mark.parametrize("name", MODELS)
def test_params_round_trip_through_clone_and_set_params(name):
    model = get_predictor(name)
    twin = clone(model)
    assert twin is not model and twin.get_params() == model.get_params()
    assert model.set_params(**model.get_params()) is model


@pytest.mark.parametrize("name", MODELS)
def test_fit_returns_self_and_is_repeatable(name, data):
    data = _usable(name, data)
    model = get_predictor(name)
    assert model.fit(data) is model
    first = model.predict(_targets(data))
    second = model.fit(data).predict(_targets(data))
    assert np.array_equal(first, second)


@pytest.mark.parametrize("name", MODELS)
def test_clone_of_fitted_model_is_unfitted_and_refits_alike(name, data):
    data = _usable(name, data)
    model = get_predictor(name).fit(data)
    twin = clone(model)
    with pytest.raises(NotFittedError):
        twin.predict(_targets(data))
    assert np.array_equal(twin.fit(data).predict(_targets(data)), model.predict(_targets(data)))


@pytest.mark.parametrize("name", MODELS)
def test_save_and_load_without_pickle(name, data, tmp_path):
    data = _usable(name, data)
    model = get_predictor(name).fit(data)
    path = tmp_path / "model.json"
    model.save(path)
    json.loads(path.read_text())  # plain JSON, no pickle
    loaded = Predictor.load(path)
    assert type(loaded) is type(model) and loaded.get_params() == model.get_params()
    assert np.array_equal(loaded.predict(_targets(data)), model.predict(_targets(data)))
    again = Predictor.from_dict(json.loads(json.dumps(model.to_dict())))
    assert np.array_equal(again.predict(_targets(data)), model.predict(_targets(data)))


@pytest.mark.parametrize("name", MODELS)
def test_predictions_are_positive_and_finite(name, data):
    data = _usable(name, data)
    target = _targets(data)
    pred = get_predictor(name).fit(data).predict(target)
    assert pred.shape == (len(target.times),) and len(pred) > 0
    assert np.all(np.isfinite(pred)) and np.all(pred > 0)


@pytest.mark.parametrize("name", MODELS)
def test_explain_agrees_with_predict(name, data):
    data = _usable(name, data)
    model = get_predictor(name).fit(data)
    target = _targets(data)
    explained = model.explain(target)
    assert all(isinstance(p, Prediction) and p.model == name for p in explained)
    assert all(set(p.breakdown) <= set(BREAKDOWN_KEYS) for p in explained)
    assert np.allclose([p.seconds for p in explained], model.predict(target), rtol=0, atol=0)

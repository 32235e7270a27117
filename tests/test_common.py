"""The contract every registered predictor keeps (in the style of scikit-learn's common tests).

Runs each model of the registry through the same checks: unfitted models refuse to
predict, ``__init__`` only stores parameters, fitting is repeatable, ``clone`` works,
save/load without pickle gives identical predictions, ``needs`` stay within the allowed
set and predictions are positive and finite on a (synthetic) dataset the model can handle.
"""

from __future__ import annotations

import functools
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


@functools.cache
def _fitted(name: str) -> Predictor:
    """``name`` fitted on the module's dataset, once per test process, for the tests that
    only read a fitted model (fitting itself is tested on fresh instances)."""
    return get_predictor(name).fit(synthetic_dataset(kernels=CORPUS_KERNELS))


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
    model = _fitted(name)
    twin = clone(model)
    with pytest.raises(NotFittedError):
        twin.predict(_targets(data))
    assert np.array_equal(twin.fit(data).predict(_targets(data)), model.predict(_targets(data)))


@pytest.mark.parametrize("name", MODELS)
def test_save_and_load_without_pickle(name, data, tmp_path):
    data = _usable(name, data)
    model = _fitted(name)
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
    pred = _fitted(name).predict(target)
    assert pred.shape == (len(target.times),) and len(pred) > 0
    assert np.all(np.isfinite(pred)) and np.all(pred > 0)


@pytest.mark.parametrize("name", MODELS)
def test_explain_agrees_with_predict(name, data):
    data = _usable(name, data)
    model = _fitted(name)
    target = _targets(data)
    explained = model.explain(target)
    assert all(isinstance(p, Prediction) and p.model == name for p in explained)
    assert all(set(p.breakdown) <= set(BREAKDOWN_KEYS) for p in explained)
    assert np.allclose([p.seconds for p in explained], model.predict(target), rtol=0, atol=0)


# -- the launch path: every model predicts one launch, or says why it cannot ------------

SAXPY = ('extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {\n'
         '    int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
         '    if (i < n) y[i] = a * x[i] + y[i];\n}\n')
FAKE = "tests.measure.fakes:FakeBackend"


@pytest.mark.toolchain
@pytest.mark.parametrize("name", MODELS)
def test_every_model_predicts_a_launch_or_says_why_not(name):
    """Through the one driver: a corpus launch (sampled on the fake GPU backend where the
    model needs sampled runs), and one's own kernel and launch."""
    import kerncast
    from kerncast import InputError, KerncastError, ToolchainError

    own = (kerncast.Kernel.of("saxpy", SAXPY),
           kerncast.Launch(16, 256, args=(np.int32(4096), np.float32(2),
                                          kerncast.Array("float32", 4096, "uniform(0, 1)"),
                                          kerncast.Array("float32", 4096))))
    for call in (lambda: kerncast.predict("corpus:copy_vector", size="small", model=name,
                                          backend=FAKE),
                 lambda: kerncast.predict(*own, model=name, backend=FAKE)):
        try:
            p = call()
        except ToolchainError as exc:  # a tool the model needs is missing here: named
            assert "install" in str(exc) or "CUDA toolkit" in str(exc), str(exc)
            continue
        except KerncastError as exc:  # a model that cannot: says what to use instead
            assert isinstance(exc, InputError), str(exc)
            assert "--model" in str(exc) or "kerncast evaluate" in str(exc), str(exc)
            continue
        assert isinstance(p, Prediction) and p.model == name
        assert np.isfinite(p.seconds) and p.seconds > 0
        assert p.based_on.get("configuration")


# -- the backends: every registered kind keeps the same contract ---------------------------

def _recorded(tmp_path):
    """A dataset with one recorded ``times`` row, for the replay backend."""
    from kerncast.corpus import get_kernel
    from kerncast.data import Dataset
    from kerncast.measure._run import measure_config
    from tests.measure.fakes import FakeBackend

    kernel = get_kernel("copy_vector")
    row = measure_config(FakeBackend(), kernel, kernel.launch("small"))
    Dataset(times=__import__("pandas").DataFrame([row])).write(tmp_path / "rec")
    return tmp_path / "rec"


def _backend(kind, monkeypatch, tmp_path, pocl_backend):
    """An instance of ``kind``: the CUDA ones over the stand-ins for CuPy and the driver
    API, PoCL for real, replay over a recorded row; None where none can be made here."""
    import sys
    import types

    from tests.measure.cuda_fakes import fake_cupy, fake_driver

    log: list = []
    if kind.name == "cupy":
        monkeypatch.setitem(sys.modules, "cupy", fake_cupy(log))
        monkeypatch.setattr("kerncast.measure._cupy.cubin_file",
                            lambda *a: (_ for _ in ()).throw(kerncast_toolchain()))
        return kind.make(device="h100")
    if kind.name == "driver":
        cu = fake_driver(log)
        bindings = types.ModuleType("cuda.bindings")
        bindings.driver = cu
        cuda = types.ModuleType("cuda")
        cuda.bindings = bindings
        for module, value in (("cuda", cuda), ("cuda.bindings", bindings),
                              ("cuda.bindings.driver", cu)):
            monkeypatch.setitem(sys.modules, module, value)
        monkeypatch.setattr("kerncast.measure._driver.try_nvml", lambda *a: None)
        return kind.make(device="h100", sm_count=16)
    if kind.name == "pocl":
        return pocl_backend
    if kind.name == "replay":
        return kind.make(dataset=str(_recorded(tmp_path)), device="h100")
    return None


def kerncast_toolchain():
    from kerncast import ToolchainError

    return ToolchainError("no NVRTC here")


@pytest.fixture
def pocl_or_none(request):
    from tests.conftest import _pocl_backend

    return _pocl_backend()[0]


def _backend_kinds():
    from kerncast.measure._factory import BACKEND_KINDS  # the module that registers them

    return list(BACKEND_KINDS.values())


@pytest.mark.parametrize("kind", _backend_kinds(), ids=lambda k: k.name)
def test_every_backend_declares_and_keeps_its_contract(kind, monkeypatch, tmp_path,
                                                       pocl_or_none):
    from kerncast.corpus import get_kernel
    from kerncast.measure._backend import Backend
    from kerncast.measure._job import corpus_job
    from kerncast.measure._plan import EXPERIMENTS

    assert kind.language in ("cuda", "opencl") and kind.description
    assert kind.experiments is None or kind.experiments <= set(EXPERIMENTS)
    backend = _backend(kind, monkeypatch, tmp_path, pocl_or_none)
    if backend is None:
        pytest.skip(f"no {kind.name} backend can be made on this machine")
    assert isinstance(backend, Backend) and backend.language == kind.language
    if kind.name == "driver":
        pytest.skip("the driver API's stand-in covers contexts and green contexts, not module "
                    "loading: its measurements run on a GPU only (tools/gpu_selftest.py)")
    kernel = get_kernel("copy_vector")
    job = corpus_job(kernel, kernel.launch("small"), backend.language)
    row = backend.measure(job)
    assert row["kernel"] == "copy_vector" and row["config"] == job.columns["config"]
    assert row["status"] in ("ok", "wrong_output"), row.get("error")
    assert row["time_median_s"] > 0

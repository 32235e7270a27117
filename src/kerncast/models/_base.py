"""The predictor contract: one scikit-learn style estimator class for every model.

Every performance model of kerncast (the static simulator, the sampling and learned
models, the survey's baselines) is a :class:`Predictor`. The contract:

* ``__init__`` takes keyword-only parameters and only stores them (so that
  ``get_params``/``set_params``/``sklearn.base.clone`` work). The class keeps
  scikit-learn's estimator protocol without deriving from its ``BaseEstimator``, whose
  import (about a second, with SciPy's statistics) would be paid by every prediction,
  the static one included; the learned models import scikit-learn themselves;
* ``fit(dataset)`` returns ``self``; learned state lives in attributes whose names end
  in ``_``; models that learn nothing still set ``fitted_`` so the contract is uniform;
* ``predict(dataset)`` returns one time in seconds per row of ``dataset.times`` (the
  target rows) and raises :class:`~kerncast.NotFittedError` before ``fit``; ``NaN``
  marks a row the model cannot predict (the harness records it as failed);
* ``explain(dataset)`` returns a :class:`Prediction` per row with the breakdown;
* class attributes ``name`` (registry key), ``needs`` (subset of :data:`NEEDS`),
  ``description``, ``insight``, ``learned`` and ``columns`` (the ``times`` columns read
  at prediction time);
* ``to_dict``/``from_dict`` and ``save``/``load`` persist a fitted model as JSON (skops,
  base64-encoded inside the JSON, for scikit-learn objects); never pickle.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from kerncast._errors import InputError, NotFittedError
from kerncast._persist import decode, encode
from kerncast.core import BREAKDOWN_KEYS, Prediction

if TYPE_CHECKING:
    from kerncast.data import Dataset

__all__ = ["BREAKDOWN_KEYS", "FORMAT_VERSION", "NEEDS", "LaunchInputs", "Prediction",
           "Predictor"]

#: What a model may need from the user, and what each means.
NEEDS: dict[str, str] = {
    "source": "the kernel's source code",
    "spec": "the device's spec sheet",
    "sampled_runs": "sampled partial-grid runs on the GPU",
    "counters": "hardware counters (Nsight Compute) of the run",
    "base_config_run": "one measured run at a base hardware configuration",
    "cpu_code": "the CPU version of the code, profiled",
}
FORMAT_VERSION = 1


@dataclass
class LaunchInputs:
    """What the prediction driver gathered for one launch, as the model's ``needs`` ask.

    ``device`` and ``sm_count`` say where the launch runs; ``backend`` (a measurement
    backend) and ``job`` (the launch as a measurement job) are there for models that
    need sampled runs or counters; ``corpus`` is the (kernel, configuration) of a corpus
    launch, for models that rebuild the launch in another process; ``registers`` is what
    the user's own build reports; ``progress`` is told each step.
    """

    device: str
    sm_count: int | None = None
    backend: Any = None
    job: Any = None
    corpus: tuple | None = None
    registers: int | None = None
    progress: Any = None


class Predictor:
    """Base class of every kerncast performance model (see the module docstring)."""

    name: ClassVar[str] = ""
    needs: ClassVar[frozenset[str]] = frozenset()
    description: ClassVar[str] = ""
    insight: ClassVar[str] = ""
    learned: ClassVar[bool] = False
    columns: ClassVar[tuple[str, ...]] = ("kernel",)

    # scikit-learn's estimator protocol -------------------------------------------------

    @classmethod
    def _param_names(cls) -> list[str]:
        """The keyword parameters of ``__init__``, sorted (as scikit-learn's are)."""
        init = cls.__init__
        if init is object.__init__:
            return []
        kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        params = inspect.signature(init).parameters.values()
        return sorted(p.name for p in params if p.name != "self" and p.kind in kinds)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The model's parameters; with ``deep``, also those of parameters that have some
        (as ``name__param``)."""
        out: dict[str, Any] = {}
        for key in self._param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def set_params(self, **params: Any) -> Predictor:
        """Set parameters (``name__param`` reaches a parameter's own); returns ``self``."""
        valid = self._param_names()
        for key, value in params.items():
            name, _, rest = key.partition("__")
            if name not in valid:
                raise InputError(f"model {self.name!r} has no parameter {name!r}; its "
                                 f"parameters are: {', '.join(valid) or 'none'}")
            if rest:
                getattr(self, name).set_params(**{rest: value})
            else:
                setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = {p.name: p.default for p in
                    inspect.signature(type(self).__init__).parameters.values()}
        shown = [f"{k}={v!r}" for k, v in self.get_params(deep=False).items()
                 if not _same(v, defaults.get(k, inspect.Parameter.empty))]
        return f"{type(self).__name__}({', '.join(shown)})"

    # The public methods check the contract; subclasses implement the underscored ones.

    def fit(self, dataset: Dataset) -> Predictor:
        """Learn from ``dataset`` (models that learn nothing only mark themselves fitted)."""
        _check_dataset(dataset)
        self._fit(dataset)
        self.fitted_ = True
        return self

    def predict(self, dataset: Dataset) -> np.ndarray:
        """Predicted seconds, one per row of ``dataset.times`` (NaN: cannot predict)."""
        self._check_fitted()
        _check_dataset(dataset)
        out = np.asarray(self._predict(dataset), dtype=float)
        if out.shape != (len(dataset.times),):
            raise ValueError(f"{self.name} returned {out.shape} predictions for "
                             f"{len(dataset.times)} rows")
        return out

    def explain(self, dataset: Dataset) -> list[Prediction]:
        """A :class:`Prediction` per row: :meth:`_one`'s for a model that predicts row by row;
        models without a breakdown give only seconds."""
        if type(self)._one is not Predictor._one:
            self._check_fitted()
            return [self._one(row) for row in dataset.times.to_dict("records")]
        return [Prediction(seconds=float(s), model=self.name) for s in self.predict(dataset)]

    @property
    def explains_rows(self) -> bool:
        """Whether :meth:`explain` gives more than seconds (a breakdown, a bottleneck)."""
        return type(self).explain is not Predictor.explain or \
            type(self)._one is not Predictor._one

    def explain_launch(self, kernel: Any, launch: Any, inputs: LaunchInputs) -> Prediction:
        """Predict one launch of ``kernel`` (:class:`kerncast.Kernel`, :class:`kerncast.Launch`)
        from what ``inputs`` holds (the driver gathers what :attr:`needs` names).

        Raises
        ------
        InputError
            For a model that predicts from measured datasets only.
        """
        raise InputError(f"the model {self.name!r} predicts from measured datasets, not one "
                         "launch; score it with 'kerncast evaluate', or predict with --model "
                         "static or sampling")

    def _fit(self, dataset: Dataset) -> None:
        """Learn the model's state; the default learns nothing."""

    def _predict(self, dataset: Dataset) -> np.ndarray:
        """The seconds of :meth:`explain` for a model that explains; others implement it."""
        if self.explains_rows:
            return np.array([p.seconds for p in self.explain(dataset)], dtype=float)
        raise NotImplementedError

    def _one(self, row: dict[str, Any]) -> Prediction:
        """One row's prediction, for a model that predicts row by row (``explain`` and
        ``predict`` then come from it)."""
        raise NotImplementedError

    def _check_fitted(self) -> None:
        if not getattr(self, "fitted_", False):
            raise NotFittedError(f"model {self.name!r} is not fitted yet; call fit(dataset) "
                                 "before predict or save")

    # Persistence ---------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The fitted model as JSON-ready data: name, parameters and learned state."""
        self._check_fitted()
        state = {k: v for k, v in vars(self).items() if k.endswith("_") and not k.startswith("_")}
        return {"kerncast_model": FORMAT_VERSION, "name": self.name,
                "params": encode(self.get_params(deep=False)), "state": encode(state)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Predictor:
        """Rebuild a fitted model written by :meth:`to_dict`."""
        from kerncast.models.registry import predictor_class  # noqa: PLC0415 (cycle)

        if not isinstance(data, dict) or data.get("kerncast_model") != FORMAT_VERSION:
            raise InputError("not a saved kerncast model (format version "
                             f"{FORMAT_VERSION}); save it again with Predictor.save")
        klass = predictor_class(data["name"])
        if cls is not Predictor and not issubclass(klass, cls):
            raise InputError(f"the saved model is {data['name']!r}, not {cls.name!r}")
        model = klass(**decode(data["params"]))
        for key, value in decode(data["state"]).items():
            setattr(model, key, value)
        return model

    def save(self, path: str | Path) -> None:
        """Write the fitted model to ``path`` as JSON (atomically: a reader sees the old
        file or the whole new one)."""
        path = Path(path)
        text = json.dumps(self.to_dict(), indent=1)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text)
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path) -> Predictor:
        """Read a model written by :meth:`save`."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"cannot read the saved model {path}: {exc}") from None
        return cls.from_dict(data)


def _same(value: Any, default: Any) -> bool:
    """Whether a parameter still has its default (arrays and odd types count as changed)."""
    try:
        return bool(value is default or value == default)
    except (TypeError, ValueError):
        return False


def _check_dataset(dataset: Any) -> None:
    from kerncast.data import Dataset  # noqa: PLC0415 (pandas only where tables are used)

    if not isinstance(dataset, Dataset):
        raise InputError(f"predictors take a kerncast Dataset, not {type(dataset).__name__}; "
                         "wrap a table as Dataset(times=table)")

"""Predictors: every performance model behind one estimator interface and one registry.

>>> from kerncast.models import get_predictor
>>> model = get_predictor("roofline")        # doctest: +SKIP
>>> model.fit(train).predict(test)           # doctest: +SKIP

Each model is a :class:`Predictor` registered by name (:func:`register`); the
evaluation harness (``kerncast.evaluate``) scores them all on the same data. Work
counts for analytical models come from :mod:`kerncast.models.work`.
"""

from typing import Any

from kerncast._lazy import LazyNames
from kerncast.models._base import BREAKDOWN_KEYS, NEEDS, Prediction, Predictor
from kerncast.models.registry import get_predictor, list_predictors, predictor_class, register

# Everything else loads on first use: a prediction with one model imports that model's
# module only (scikit-learn, pandas and the emulator are not needed by all of them).
_LAZY = {
    "LaunchRegression": "_launch_regression",
    "LAUNCH_OVERHEAD_H100_S": "_roofline",
    "Roofline": "_roofline",
    "Sampling": "_sampling",
    "SeedLinear": "_sampling",
    "StaticSimulator": "_static",
    "SamplingSVR": "_svr",
    "XappSpeedup": "_xapp",
    **dict.fromkeys(("predict", "resolve_kernel", "sweep", "sweep_space"), "_predict"),
    **dict.fromkeys(("STRATEGIES", "Search"), "_search"),
    **dict.fromkeys(("WhatIf", "importance", "what_if"), "_insight"),
    **dict.fromkeys(("shipped_models", "train", "trained_model", "trained_path"), "_trained"),
    **dict.fromkeys(("corpus_surface", "own_base", "own_surface", "saved_run", "scale",
                     "shipped_data", "trainable"), "_scale"),
    **dict.fromkeys(("INSTANCE", "METHODS", "SM_AXIS", "base_inputs", "base_physical",
                     "base_runs", "fit_surfaces", "merge_datasets", "parse_configuration",
                     "predict_surface", "surface_frame"), "_scaling"),
}

__all__ = [
    "BREAKDOWN_KEYS",
    "INSTANCE",
    "LAUNCH_OVERHEAD_H100_S",
    "METHODS",
    "NEEDS",
    "SM_AXIS",
    "STRATEGIES",
    "Search",
    "LaunchRegression",
    "Prediction",
    "Predictor",
    "Roofline",
    "WhatIf",
    "Sampling",
    "SamplingSVR",
    "SeedLinear",
    "StaticSimulator",
    "XappSpeedup",
    "base_inputs",
    "base_physical",
    "base_runs",
    "corpus_surface",
    "fit_surfaces",
    "get_predictor",
    "importance",
    "list_predictors",
    "merge_datasets",
    "own_base",
    "own_surface",
    "parse_configuration",
    "predict",
    "predict_surface",
    "resolve_kernel",
    "saved_run",
    "scale",
    "shipped_data",
    "sweep",
    "sweep_space",
    "predictor_class",
    "register",
    "shipped_models",
    "surface_frame",
    "train",
    "trainable",
    "trained_model",
    "trained_path",
    "what_if",
]


_lazy = LazyNames(__name__, _LAZY, globals())


def __getattr__(name: str) -> Any:
    return _lazy.get(name)


def __dir__() -> list[str]:
    return _lazy.names()

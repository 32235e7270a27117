"""Predictors: every performance model behind one estimator interface and one registry.

>>> from kerncast.models import get_predictor
>>> model = get_predictor("roofline")        # doctest: +SKIP
>>> model.fit(train).predict(test)           # doctest: +SKIP

Each model is a :class:`Predictor` registered by name (:func:`register`); the
evaluation harness (``kerncast.evaluate``) scores them all on the same data. Work
counts for analytical models come from :mod:`kerncast.models.work`.
"""

from kerncast.models._base import BREAKDOWN_KEYS, NEEDS, Prediction, Predictor
from kerncast.models.registry import get_predictor, list_predictors, predictor_class, register

# Modules that define models register them on import.
from kerncast.models import _launch_regression, _roofline, _sampling, _scaling, _static, _svr, _xapp, zoo  # noqa: E402, F401  isort: skip
from kerncast.models._launch_regression import LaunchRegression  # noqa: E402
from kerncast.models._roofline import LAUNCH_OVERHEAD_H100_S, Roofline  # noqa: E402
from kerncast.models._sampling import Sampling, SeedLinear  # noqa: E402
from kerncast.models._static import StaticSimulator  # noqa: E402
from kerncast.models._svr import SamplingSVR  # noqa: E402
from kerncast.models._xapp import XappSpeedup  # noqa: E402
from kerncast.models._predict import predict, resolve_kernel, sweep  # noqa: E402
from kerncast.models._insight import WhatIf, importance, what_if  # noqa: E402
from kerncast.models._trained import shipped_models, train, trained_model  # noqa: E402

__all__ = [
    "BREAKDOWN_KEYS",
    "LAUNCH_OVERHEAD_H100_S",
    "NEEDS",
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
    "get_predictor",
    "importance",
    "list_predictors",
    "predict",
    "resolve_kernel",
    "sweep",
    "predictor_class",
    "register",
    "shipped_models",
    "train",
    "trained_model",
    "what_if",
]

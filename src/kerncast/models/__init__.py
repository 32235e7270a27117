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
from kerncast.models._predict import predict, resolve_kernel, sweep, sweep_space  # noqa: E402
from kerncast.models._search import STRATEGIES, Search  # noqa: E402
from kerncast.models._insight import WhatIf, importance, what_if  # noqa: E402
from kerncast.models._trained import shipped_models, train, trained_model, trained_path  # noqa: E402
from kerncast.models._scaling import (  # noqa: E402
    INSTANCE, METHODS, SM_AXIS, base_inputs, base_physical, base_runs, fit_surfaces, merge_datasets,
    parse_configuration, predict_surface, surface_frame,
)

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
    "fit_surfaces",
    "get_predictor",
    "importance",
    "list_predictors",
    "merge_datasets",
    "parse_configuration",
    "predict",
    "predict_surface",
    "resolve_kernel",
    "sweep",
    "sweep_space",
    "predictor_class",
    "register",
    "shipped_models",
    "surface_frame",
    "train",
    "trained_model",
    "trained_path",
    "what_if",
]

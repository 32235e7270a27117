"""The one registry of predictors: models are found by name, never by if/elif chains.

>>> from kerncast.models import get_predictor, list_predictors
>>> "roofline" in list_predictors()
True
>>> get_predictor("roofline", launch_overhead_s=4e-6).launch_overhead_s
4e-06

A model registers itself with the :func:`register` class decorator. The built-in models'
modules are imported when their model is first asked for (:data:`BUILTIN`), so that a
prediction with one model loads neither the others nor their libraries.
"""

from __future__ import annotations

import re
from importlib import import_module
from typing import Any, TypeVar

from kerncast._errors import InputError, unknown_name
from kerncast.models._base import NEEDS, Predictor

__all__ = ["BUILTIN", "get_predictor", "list_predictors", "predictor_class", "register"]

_REGISTRY: dict[str, type[Predictor]] = {}
#: The module that defines and registers each built-in model.
BUILTIN: dict[str, str] = {
    "combined": "kerncast.models.zoo._combined",
    "components": "kerncast.models.zoo._components",
    "eiger": "kerncast.models.zoo._eiger",
    "gpu-pram": "kerncast.models.zoo._pram",
    "gpu-random-forest": "kerncast.models.zoo._random_forest",
    "launch-regression": "kerncast.models._launch_regression",
    "mwp-cwp": "kerncast.models.zoo._mwp_cwp",
    "pmac": "kerncast.models.zoo._pmac",
    "qa": "kerncast.models.zoo._qa",
    "roofline": "kerncast.models._roofline",
    "sampling": "kerncast.models._sampling",
    "sampling-svr": "kerncast.models._svr",
    "scaling-surfaces": "kerncast.models._scaling",
    "seed-linear": "kerncast.models._sampling",
    "stargazer": "kerncast.models.zoo._stargazer",
    "static": "kerncast.models._static",
    "wfg": "kerncast.models.zoo._wfg",
    "xapp": "kerncast.models._xapp",
}
_NAME = re.compile(r"^[a-z0-9][a-z0-9\-]*$")
P = TypeVar("P", bound=type[Predictor])


def register(cls: P) -> P:
    """Class decorator: add a :class:`Predictor` subclass to the registry under ``cls.name``.

    Raises
    ------
    TypeError
        If the class is not a Predictor, its name is missing or taken, or its ``needs``
        go beyond :data:`kerncast.models.NEEDS`.
    """
    if not (isinstance(cls, type) and issubclass(cls, Predictor)):
        raise TypeError(f"only Predictor subclasses can be registered, not {cls!r}")
    if not _NAME.match(cls.name or ""):
        raise TypeError(f"{cls.__name__}.name {cls.name!r} must be lower-case words joined by '-'")
    if cls.name in BUILTIN and cls.__module__ != BUILTIN[cls.name]:
        raise TypeError(f"model name {cls.name!r} is taken by a built-in model")
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise TypeError(f"model name {cls.name!r} is taken by {_REGISTRY[cls.name].__name__}")
    if not isinstance(cls.needs, frozenset) or not cls.needs <= set(NEEDS):
        raise TypeError(f"{cls.__name__}.needs must be a frozenset over {sorted(NEEDS)}")
    _REGISTRY[cls.name] = cls
    return cls


def list_predictors() -> list[str]:
    """Names of every registered model, built-in or not, sorted."""
    return sorted(set(_REGISTRY) | set(BUILTIN))


def predictor_class(name: str) -> type[Predictor]:
    """The registered class called ``name``.

    Raises
    ------
    InputError
        For an unknown name, listing the known ones.
    """
    key = str(name).strip().lower()
    if key not in _REGISTRY and key in BUILTIN:
        import_module(BUILTIN[key])
    cls = _REGISTRY.get(key)
    if cls is None:
        raise unknown_name("model", name, list_predictors())
    return cls


def get_predictor(name: str, **params: Any) -> Predictor:
    """A new, unfitted instance of the model ``name`` with ``params``."""
    cls = predictor_class(name)
    try:
        return cls(**params)
    except TypeError as exc:
        valid = ", ".join(cls().get_params()) or "none"
        raise InputError(f"model {name!r} does not take those parameters ({exc}); its "
                         f"parameters are: {valid}") from None

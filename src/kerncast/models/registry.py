"""The one registry of predictors: models are found by name, never by if/elif chains.

>>> from kerncast.models import get_predictor, list_predictors
>>> "roofline" in list_predictors()
True
>>> get_predictor("roofline", launch_overhead_s=4e-6).launch_overhead_s
4e-06

A model registers itself with the :func:`register` class decorator; modules that define
models are imported by ``kerncast.models``.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

from kerncast._errors import InputError, unknown_name
from kerncast.models._base import NEEDS, Predictor

__all__ = ["get_predictor", "list_predictors", "predictor_class", "register"]

_REGISTRY: dict[str, type[Predictor]] = {}
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
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise TypeError(f"model name {cls.name!r} is taken by {_REGISTRY[cls.name].__name__}")
    if not isinstance(cls.needs, frozenset) or not cls.needs <= set(NEEDS):
        raise TypeError(f"{cls.__name__}.needs must be a frozenset over {sorted(NEEDS)}")
    _REGISTRY[cls.name] = cls
    return cls


def list_predictors() -> list[str]:
    """Names of every registered model, sorted."""
    return sorted(_REGISTRY)


def predictor_class(name: str) -> type[Predictor]:
    """The registered class called ``name``.

    Raises
    ------
    InputError
        For an unknown name, listing the known ones.
    """
    cls = _REGISTRY.get(str(name).strip().lower())
    if cls is None:
        raise unknown_name("model", name, _REGISTRY)
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

"""JSON encoding of model parameters and learned state, without pickle.

Plain JSON values pass through; NumPy arrays and scalars, tuples, sets and dicts with
non-string keys are tagged; scikit-learn objects are serialised with skops and stored
base64-encoded. Loading skops data trusts only types from scikit-learn, NumPy and SciPy.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from kerncast._errors import InputError, ToolchainError

__all__ = ["decode", "encode"]

_TRUSTED_PREFIXES = ("sklearn.", "numpy.", "scipy.", "builtins.")


def encode(value: Any) -> Any:
    """``value`` as JSON-ready data that :func:`decode` turns back into an equal value."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.tolist(), "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, (list, tuple)):
        items = [encode(v) for v in value]
        return items if isinstance(value, list) else {"__tuple__": items}
    if isinstance(value, (set, frozenset)):
        return {"__set__": sorted(encode(v) for v in value)}
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("__") for k in value):
            return {k: encode(v) for k, v in value.items()}
        return {"__items__": [[encode(k), encode(v)] for k, v in value.items()]}
    if type(value).__module__.startswith("sklearn."):
        import skops.io  # noqa: PLC0415 (optional, heavy)

        return {"__skops__": base64.b64encode(skops.io.dumps(value)).decode("ascii")}
    raise TypeError(f"cannot persist a {type(value).__name__} without pickle; store it as "
                    "numbers, arrays or a scikit-learn object")


def decode(value: Any) -> Any:
    """The inverse of :func:`encode`."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__ndarray__" in value:
        return np.asarray(value["__ndarray__"], dtype=value["dtype"]).reshape(value["shape"])
    if "__tuple__" in value:
        return tuple(decode(v) for v in value["__tuple__"])
    if "__set__" in value:
        return frozenset(decode(v) for v in value["__set__"])
    if "__items__" in value:
        return {_hashable(decode(k)): decode(v) for k, v in value["__items__"]}
    if "__skops__" in value:
        return _load_skops(base64.b64decode(value["__skops__"]))
    return {k: decode(v) for k, v in value.items()}


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def _load_skops(data: bytes) -> Any:
    try:
        import skops.io  # noqa: PLC0415 (on use: skops)
    except ImportError as exc:
        raise ToolchainError("loading a saved scikit-learn model needs skops, which is not "
                             "installed here; install it with 'pip install skops' (kerncast "
                             "declares it as a dependency)") from exc

    untrusted = skops.io.get_untrusted_types(data=data)
    refused = [t for t in untrusted if not t.startswith(_TRUSTED_PREFIXES)]
    if refused:
        raise InputError(f"the saved model holds types kerncast does not trust: {refused}; "
                         "only scikit-learn, NumPy and SciPy objects are loaded")
    return skops.io.loads(data, trusted=untrusted)

"""kerncast.cpu: profile a region of C/C++ code for the CPU -> GPU speedup model (XAPP).

>>> from kerncast.cpu import profile
>>> p = profile(["saxpy.c"], "saxpy", ["1000000"])      # doctest: +SKIP
>>> p.features["ilp16384"], p.slowdown                  # doctest: +SKIP

:func:`profile` compiles the program with clang-14, runs it natively and under the
profiler, and returns a :class:`CpuProfile` with XAPP's 39 features (:data:`FEATURES`).
The learning side (the paper's model and kerncast's) is in :mod:`kerncast.cpu._xapp`;
the ``xapp`` predictor and ``kerncast speedup`` use it.
"""

from importlib import import_module
from typing import Any

from kerncast.cpu._features import FEATURES
from kerncast.cpu._profile import CpuProfile, profile

# The learning side, loaded on first use (pandas, scikit-learn).
_LAZY = {"load_features": "_xapp_data", "KerncastModel": "_xapp_own",
         "PortClassifier": "_xapp_own"}

__all__ = ["FEATURES", "CpuProfile", "KerncastModel", "PortClassifier", "load_features", "profile"]


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'kerncast.cpu' has no attribute {name!r}")
    value = getattr(import_module(f"kerncast.cpu.{where}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

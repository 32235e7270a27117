"""kerncast.cpu: profile a region of C/C++ code for the CPU -> GPU speedup model (XAPP).

>>> from kerncast.cpu import profile
>>> p = profile(["saxpy.c"], "saxpy", ["1000000"])      # doctest: +SKIP
>>> p.features["ilp16384"], p.slowdown                  # doctest: +SKIP

:func:`profile` compiles the program with clang-14, runs it natively and under the
profiler, and returns a :class:`CpuProfile` with XAPP's 39 features (:data:`FEATURES`).
The learning side (the paper's model and kerncast's) is in :mod:`kerncast.cpu._xapp`;
the ``xapp`` predictor and ``kerncast speedup`` use it.
"""

from typing import Any

from kerncast._lazy import LazyNames

from kerncast.cpu._features import FEATURES
from kerncast.cpu._profile import CpuProfile, profile

# The learning side, loaded on first use (pandas, scikit-learn).
_LAZY = {"load_features": "_xapp_data", "KerncastModel": "_xapp_own",
         "PortClassifier": "_xapp_own"}

__all__ = ["FEATURES", "CpuProfile", "KerncastModel", "PortClassifier", "load_features", "profile"]


_lazy = LazyNames(__name__, _LAZY, globals())


def __getattr__(name: str) -> Any:
    return _lazy.get(name)


def __dir__() -> list[str]:
    return _lazy.names()

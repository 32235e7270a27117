"""kerncast.cpu: profile a region of C/C++ code for the CPU -> GPU speedup model (XAPP).

>>> from kerncast.cpu import profile
>>> p = profile(["saxpy.c"], "saxpy", ["1000000"])      # doctest: +SKIP
>>> p.features["ilp16384"], p.slowdown                  # doctest: +SKIP

:func:`profile` compiles the program with clang-14, runs it natively and under the
profiler, and returns a :class:`CpuProfile` with XAPP's 39 features (:data:`FEATURES`).
The learning side (the paper's model and kerncast's) is in :mod:`kerncast.cpu._xapp`;
the ``xapp`` predictor and ``kerncast speedup`` use it.
"""

from kerncast.cpu._features import FEATURES
from kerncast.cpu._profile import CpuProfile, profile

__all__ = ["FEATURES", "CpuProfile", "profile"]

"""Numba for the loops that generating inputs runs over every element, compiled on use.

:func:`jitted` gives a function compiled by Numba in nopython mode (cached on disk),
made at its first call (importing Numba takes 0.2 s), or None where Numba is missing or
``NUMBA_DISABLE_JIT`` is set: the caller then takes its NumPy way, which gives the same
values more slowly.
"""

from __future__ import annotations

from collections.abc import Callable
from threading import Lock

__all__ = ["jitted"]

_MADE: dict[Callable, Callable | None] = {}
_LOCK = Lock()


def jitted(func: Callable) -> Callable | None:
    """``func`` compiled by Numba, or None where it cannot be."""
    with _LOCK:
        if func not in _MADE:
            _MADE[func] = _compile(func)
        return _MADE[func]


def _compile(func: Callable) -> Callable | None:
    try:
        import numba  # noqa: PLC0415 (on use: the compiler, 0.2 s to import)
    except ImportError:  # pragma: no cover (Numba is a dependency)
        return None
    if getattr(numba.config, "DISABLE_JIT", False):
        return None
    return numba.njit(cache=True, nogil=True)(func)

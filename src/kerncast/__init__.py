"""kerncast: predict how fast a GPU kernel runs, how it scales and why.

The top-level package is light: it imports neither CuPy, PyOpenCL, Ray nor
matplotlib. Subpackages follow the pipeline of ``DESIGN.md``::

    frontend -> ptx -> emu -> trace -> sim -> models -> evaluate
    devices (specs, occupancy), measure (real runs), data (datasets), corpus, cpu
"""

from __future__ import annotations

from kerncast._lazy import LazyNames

from typing import Any

from kerncast._errors import InputError, KerncastError, NotFittedError, ToolchainError

__version__ = "0.1.0"

# Public functions that live in subpackages, loaded on first use so that
# ``import kerncast`` stays fast and free of optional dependencies.
_LAZY = {
    "Array": "kerncast.core",
    "Generator": "kerncast.core",
    "Kernel": "kerncast.core",
    "Launch": "kerncast.core",
    "Prediction": "kerncast.core",
    "Scalar": "kerncast.core",
    "Struct": "kerncast.core",
    "View": "kerncast.core",
    "load_launch_file": "kerncast.core",
    "compile": "kerncast.frontend",
    "emulate": "kerncast.emu",
    "predict": "kerncast.models",
    "sweep": "kerncast.models",
    "scale": "kerncast.models",
    "what_if": "kerncast.models",
    "measure": "kerncast.measure",
    "get_device": "kerncast.devices",
    "occupancy": "kerncast.devices",
}

__all__ = [
    "InputError",
    "KerncastError",
    "NotFittedError",
    "ToolchainError",
    "__version__",
    *sorted(_LAZY),
]


_lazy = LazyNames(__name__, _LAZY, globals())


def __getattr__(name: str) -> Any:
    return _lazy.get(name)


def __dir__() -> list[str]:
    return _lazy.names()

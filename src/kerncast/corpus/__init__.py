"""The kerncast corpus: kernels to learn from and to test against.

Each application directory under ``kernels/`` holds ``spec.toml`` (arguments, sizes,
launch space, checks), the CUDA (``.cu``) and OpenCL (``.cl``) sources, a
single-threaded C version (``.c``) with its region of interest marked, and a Python
module (``.py``) with the seeded input generator and the NumPy reference.
Kernels are addressed as ``corpus:NAME`` wherever a command takes a kernel.
"""

from typing import Any

from kerncast._lazy import LazyNames

from kerncast.corpus._catalog import (
    KERNEL_DIR,
    get_kernel,
    is_corpus_ref,
    list_applications,
    list_kernels,
)
from kerncast.corpus._data import (CorpusInputs, compare_outputs, corpus_instance,
                                   expected_outputs, make_args, module_of, poison)
from kerncast.core import evaluate
from kerncast.corpus._spec import (SIZE_NAMES, Application, Arg, CorpusKernel, LaunchConfig,
                                   load_application)

# The C versions' build, loaded on first use (``kerncast.cli`` imports the corpus).
_LAZY = {"CFLAGS": "_cversion", "INCLUDE_DIR": "_cversion", "build_c": "_cversion",
         "write_run_dir": "_cversion"}

__all__ = [
    "CFLAGS",
    "INCLUDE_DIR",
    "KERNEL_DIR",
    "SIZE_NAMES",
    "Application",
    "Arg",
    "CorpusInputs",
    "CorpusKernel",
    "LaunchConfig",
    "build_c",
    "compare_outputs",
    "corpus_instance",
    "evaluate",
    "expected_outputs",
    "get_kernel",
    "is_corpus_ref",
    "list_applications",
    "list_kernels",
    "load_application",
    "make_args",
    "module_of",
    "poison",
    "write_run_dir",
]


_lazy = LazyNames(__name__, _LAZY, globals())


def __getattr__(name: str) -> Any:
    return _lazy.get(name)


def __dir__() -> list[str]:
    return _lazy.names()

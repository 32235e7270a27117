"""The kerncast corpus: kernels to learn from and to test against.

Each application directory under ``kernels/`` holds ``spec.toml`` (arguments, sizes,
launch space, checks), the CUDA (``.cu``) and OpenCL (``.cl``) sources, a
single-threaded C version (``.c``) with its region of interest marked, and a Python
module (``.py``) with the seeded input generator and the NumPy reference.
Kernels are addressed as ``corpus:NAME`` wherever a command takes a kernel.
"""

from kerncast.corpus._catalog import (
    KERNEL_DIR,
    get_kernel,
    is_corpus_ref,
    list_applications,
    list_kernels,
)
from kerncast.corpus._data import (CorpusInputs, compare_outputs, corpus_instance,
                                   expected_outputs, make_args, module_of)
from kerncast.core._expr import evaluate
from kerncast.corpus._spec import SIZE_NAMES, Application, Arg, CorpusKernel, LaunchConfig

__all__ = [
    "KERNEL_DIR",
    "SIZE_NAMES",
    "Application",
    "Arg",
    "CorpusInputs",
    "CorpusKernel",
    "LaunchConfig",
    "compare_outputs",
    "corpus_instance",
    "evaluate",
    "expected_outputs",
    "get_kernel",
    "is_corpus_ref",
    "list_applications",
    "list_kernels",
    "make_args",
    "module_of",
]

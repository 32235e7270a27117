"""kerncast.frontend: CUDA C++, OpenCL C and PTX in; PTX and resource usage out.

>>> import kerncast
>>> tu = kerncast.compile("matmul.cu", arch="h100", defines={"TILE": 16})  # doctest: +SKIP
>>> tu.kernel("matmul_tiled").resources().registers                         # doctest: +SKIP
32

CUDA C++ goes through ``nvcc -ptx`` (PATH, then NVIDIA's ``nvidia-cuda-nvcc``
wheel) or NVRTC (the ``nvidia-cuda-nvrtc`` wheel); OpenCL C through clang's NVPTX
back end with libclc, or NVIDIA's OpenCL driver; PTX is taken as it is. ptxas
(PATH, then the wheel) reports each kernel's registers, shared, local and constant
memory. Results are cached on disk (``$KERNCAST_CACHE``, default
``~/.cache/kerncast/frontend``).
"""

from kerncast.frontend._arch import DEFAULT_ARCH, resolve_arch
from kerncast.frontend._build import build
from kerncast.frontend._cache import cache_root
from kerncast.frontend._compile import compile, define_flags
from kerncast.frontend._offset import (
    OFFSET_PARAMS,
    offset_kernel,
    offset_launch,
    offset_ptx,
    opencl_prelude,
)
from kerncast.frontend._ptxas import Resources, parse_cubin_constants, parse_verbose
from kerncast.frontend._ptxscan import LaunchBounds, Param, base_name, scan_entries
from kerncast.frontend._toolchain import (
    NO_CLANG,
    NO_CUDA,
    NO_PTXAS,
    Tool,
    find_clang,
    find_nvcc,
    find_nvrtc,
    find_ptxas,
    wheel_root,
)
from kerncast.frontend._batch import (
    BATCH,
    batch_index,
    declared_names,
    module_header,
    shares_a_run,
    tagged,
    untagged,
)
from kerncast.frontend._unit import Kernel, TranslationUnit, assemble_resources

__all__ = [
    "BATCH",
    "DEFAULT_ARCH",
    "NO_CLANG",
    "NO_CUDA",
    "NO_PTXAS",
    "OFFSET_PARAMS",
    "Kernel",
    "LaunchBounds",
    "Param",
    "Resources",
    "Tool",
    "TranslationUnit",
    "assemble_resources",
    "base_name",
    "batch_index",
    "build",
    "cache_root",
    "compile",
    "declared_names",
    "define_flags",
    "find_clang",
    "find_nvcc",
    "find_nvrtc",
    "find_ptxas",
    "module_header",
    "offset_kernel",
    "offset_launch",
    "offset_ptx",
    "opencl_prelude",
    "parse_cubin_constants",
    "parse_verbose",
    "resolve_arch",
    "scan_entries",
    "shares_a_run",
    "tagged",
    "untagged",
    "wheel_root",
]

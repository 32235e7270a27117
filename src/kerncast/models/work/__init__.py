"""Work counts (operations, bytes) of a launch, from pluggable providers.

>>> from kerncast.corpus import get_kernel
>>> from kerncast.models.work import work_counts
>>> k = get_kernel("matmul_naive")
>>> work_counts(k, k.launch("small"), "algorithmic").flops_fp32 == 2 * 48**3
True
"""

from kerncast.models.work._algorithmic import AlgorithmicProvider, algorithmic_counts, compulsory_bytes
from kerncast.models.work._counts import (
    WorkCounts,
    WorkProvider,
    WorkUnavailable,
    get_provider,
    list_providers,
    register_provider,
    work_counts,
)
from kerncast.models.work._emulator import EmulatorProvider, emulator_counts

__all__ = [
    "AlgorithmicProvider",
    "EmulatorProvider",
    "WorkCounts",
    "WorkProvider",
    "WorkUnavailable",
    "algorithmic_counts",
    "compulsory_bytes",
    "emulator_counts",
    "get_provider",
    "list_providers",
    "register_provider",
    "work_counts",
]

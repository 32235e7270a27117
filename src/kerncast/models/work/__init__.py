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
from kerncast.models.work._static import MIX_KEYS, StaticProvider, counts_from_mix, static_counts

__all__ = [
    "MIX_KEYS",
    "AlgorithmicProvider",
    "StaticProvider",
    "WorkCounts",
    "WorkProvider",
    "WorkUnavailable",
    "algorithmic_counts",
    "compulsory_bytes",
    "counts_from_mix",
    "get_provider",
    "list_providers",
    "register_provider",
    "static_counts",
    "work_counts",
]

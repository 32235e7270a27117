"""Algorithmic work counts: the algorithm's operations and its compulsory traffic.

The operation count comes from the corpus application's module (``<app>.py``), which
may define::

    def work(kernel: str, params: dict) -> dict
        # {"flops_fp32": ..., "flops_fp64": ...}, optionally "bytes_read"/"bytes_write"

(``params`` as for ``inputs``: size parameters, tunables, grid and block). Bytes default
to the compulsory traffic of the spec's buffers: every ``in`` buffer read once, every
``out`` buffer written once, ``inout`` both. This is the textbook roofline's input: a
lower bound on DRAM traffic that ignores caches' misses and re-reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kerncast.corpus import module_of
from kerncast.models.work._counts import WorkCounts, WorkUnavailable, register_provider

if TYPE_CHECKING:
    from kerncast.corpus import CorpusKernel, LaunchConfig

__all__ = ["AlgorithmicProvider", "algorithmic_counts", "compulsory_bytes"]

_KEYS = {"flops_fp32", "flops_fp64", "bytes_read", "bytes_write"}


def compulsory_bytes(kernel: CorpusKernel, config: LaunchConfig) -> tuple[float, float]:
    """Bytes read and written if every buffer is touched exactly once."""
    read = write = 0.0
    for arg in kernel.spec.args:
        if arg.kind != "buffer":
            continue
        size = kernel.buffer_elements(arg, config) * np.dtype(arg.dtype).itemsize
        if arg.intent in ("in", "inout", None):
            read += size
        if arg.intent in ("out", "inout"):
            write += size
    return read, write


def algorithmic_counts(kernel: CorpusKernel, config: LaunchConfig,
                       language: str = "cuda") -> WorkCounts:
    """Work of one launch from the application module's ``work()`` and the spec's buffers.

    Raises
    ------
    WorkUnavailable
        If the application module defines no ``work()``.
    """
    work = getattr(module_of(kernel), "work", None)
    if not callable(work):
        raise WorkUnavailable(
            f"the corpus module {kernel.app.name}.py defines no work(kernel, params) giving "
            f"{kernel.name}'s operation count; add one or use another work source")
    counts = dict(work(kernel.name, kernel.arg_env(config)))
    unknown = set(counts) - _KEYS
    if unknown:
        raise ValueError(f"{kernel.app.name}.py work() returned unknown keys {sorted(unknown)}; "
                         f"known: {sorted(_KEYS)}")
    read, write = compulsory_bytes(kernel, config)
    return WorkCounts(
        flops_fp32=float(counts.get("flops_fp32", 0.0)),
        flops_fp64=float(counts.get("flops_fp64", 0.0)),
        bytes_global_read=float(counts.get("bytes_read", read)),
        bytes_global_write=float(counts.get("bytes_write", write)),
        instructions=None, source="algorithmic",
    )


class AlgorithmicProvider:
    """The ``algorithmic`` work provider (see :func:`algorithmic_counts`)."""

    name = "algorithmic"
    priority = 20
    description = "the algorithm's operation count and each buffer read or written once"

    def counts(self, kernel: CorpusKernel, config: LaunchConfig,
               language: str = "cuda") -> WorkCounts:
        return algorithmic_counts(kernel, config, language)


register_provider(AlgorithmicProvider())

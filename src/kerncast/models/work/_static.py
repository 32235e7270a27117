"""Static work counts: the PTX instruction mix weighted by loop trip counts.

:func:`static_counts` is the narrow function the ``static`` provider calls. It needs
from the PTX layer one function, ``kerncast.ptx.dynamic_instruction_mix(kernel, config,
language)``, returning the launch's executed thread-level instructions per class (the
static mix of each basic block times the block's trip count, summed over all threads):

=======================  =====================================================
key                      meaning
=======================  =====================================================
``f32.fma``              fp32 fused multiply-adds (2 operations each)
``f32.add``/``f32.mul``  fp32 adds (and subs) and multiplies
``f32.other``            other fp32 arithmetic (div, sqrt, min, max, ...): 1 op
``f64.*``                the same for fp64
``ld.global.bytes``      bytes loaded from global memory
``st.global.bytes``      bytes stored to global memory
``atom.global.bytes``    bytes touched by global atomics (read and written)
``instructions``         every executed instruction
=======================  =====================================================

Missing keys count as zero. Until the PTX layer has that function, the provider says
so with :class:`~kerncast.models.work.WorkUnavailable`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from kerncast.models.work._counts import WorkCounts, WorkUnavailable, register_provider

if TYPE_CHECKING:
    from kerncast.corpus import CorpusKernel, LaunchConfig

__all__ = ["MIX_KEYS", "StaticProvider", "counts_from_mix", "static_counts"]

MIX_KEYS = (
    "f32.fma", "f32.add", "f32.mul", "f32.other", "f64.fma", "f64.add", "f64.mul", "f64.other",
    "ld.global.bytes", "st.global.bytes", "atom.global.bytes", "instructions",
)


def counts_from_mix(mix: Mapping[str, float], source: str = "static") -> WorkCounts:
    """Turn a dynamic instruction mix (keys of :data:`MIX_KEYS`) into work counts."""
    unknown = set(mix) - set(MIX_KEYS)
    if unknown:
        raise ValueError(f"unknown instruction-mix keys {sorted(unknown)}; known: {MIX_KEYS}")
    get = lambda key: float(mix.get(key, 0.0))  # noqa: E731

    def flops(prefix: str) -> float:
        return (2 * get(f"{prefix}.fma") + get(f"{prefix}.add") + get(f"{prefix}.mul")
                + get(f"{prefix}.other"))

    atom = get("atom.global.bytes")
    return WorkCounts(
        flops_fp32=flops("f32"), flops_fp64=flops("f64"),
        bytes_global_read=get("ld.global.bytes") + atom,
        bytes_global_write=get("st.global.bytes") + atom,
        instructions=mix.get("instructions"), source=source,
    )


def static_counts(kernel: CorpusKernel, config: LaunchConfig, language: str = "cuda") -> WorkCounts:
    """Work of one launch from the kernel's PTX (see the module docstring).

    Raises
    ------
    WorkUnavailable
        While the PTX layer lacks ``dynamic_instruction_mix``.
    """
    try:
        from kerncast.ptx import dynamic_instruction_mix  # noqa: PLC0415
    except ImportError:
        raise WorkUnavailable(
            "static PTX work counts need kerncast.ptx.dynamic_instruction_mix (the PTX "
            "parser's instruction mix times loop trip counts), which this installation does "
            "not have yet; use another work source (work='algorithmic')") from None
    return counts_from_mix(dynamic_instruction_mix(kernel, config, language), source="static")


class StaticProvider:
    """The ``static`` work provider (see :func:`static_counts`)."""

    name = "static"
    priority = 10
    description = "PTX instruction mix times loop trip counts (no caches: every load is DRAM)"

    def counts(self, kernel: CorpusKernel, config: LaunchConfig,
               language: str = "cuda") -> WorkCounts:
        return static_counts(kernel, config, language)


register_provider(StaticProvider())

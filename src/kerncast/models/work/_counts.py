"""Work counts of a launch and the pluggable sources that provide them.

A *work provider* answers "how many floating-point operations and how many bytes of
global memory does this launch of this kernel do?". Models such as the roofline take
their work from whichever provider can answer, best first (lowest ``priority``):

===============  ========  =============================================================
provider         priority  where the counts come from
===============  ========  =============================================================
``emulator``     0         the SIMT emulator's trace of a sample of the launch's blocks,
                           scaled to the grid: executed fp32/fp64 operations and the
                           32-byte sectors of coalesced global requests
``algorithmic``  20        the algorithm's operation count (``work()`` in the corpus
                           module) and the compulsory traffic of the spec's buffers
===============  ========  =============================================================

A provider that cannot answer raises :class:`WorkUnavailable` with the reason; the
harness records that as the model's failure on that kernel.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

from kerncast._errors import InputError, KerncastError

if TYPE_CHECKING:
    from kerncast.corpus import CorpusKernel, LaunchConfig

__all__ = [
    "WorkCounts",
    "WorkProvider",
    "WorkUnavailable",
    "get_provider",
    "list_providers",
    "register_provider",
    "work_counts",
]


class WorkUnavailable(KerncastError):
    """A work provider cannot count the work of this kernel (says why and what to do)."""


@dataclass(frozen=True)
class WorkCounts:
    """Operations and global-memory bytes of one whole launch (all threads).

    ``flops_*`` count an FMA as two operations. ``instructions`` is the number of
    thread-level instructions executed, where the provider knows it (else ``None``).
    ``source`` names the provider.
    """

    flops_fp32: float
    flops_fp64: float
    bytes_global_read: float
    bytes_global_write: float
    instructions: float | None
    source: str

    def __post_init__(self) -> None:
        for name in ("flops_fp32", "flops_fp64", "bytes_global_read", "bytes_global_write"):
            value = getattr(self, name)
            if not value >= 0:  # also rejects NaN
                raise ValueError(f"WorkCounts.{name} must be a count >= 0, not {value!r}")

    @property
    def flops(self) -> float:
        return self.flops_fp32 + self.flops_fp64

    @property
    def bytes_global(self) -> float:
        return self.bytes_global_read + self.bytes_global_write

    @property
    def dominant_precision(self) -> str:
        """``"fp64"`` when most operations are double precision, else ``"fp32"``."""
        return "fp64" if self.flops_fp64 > self.flops_fp32 else "fp32"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class WorkProvider(Protocol):
    """What a source of work counts implements (see the module docstring)."""

    name: str
    priority: int
    description: str

    def counts(self, kernel: CorpusKernel, config: LaunchConfig,
               language: str = "cuda") -> WorkCounts: ...


_PROVIDERS: dict[str, WorkProvider] = {}


def register_provider(provider: WorkProvider) -> WorkProvider:
    """Add a provider (an object with ``name``, ``priority``, ``description``, ``counts``)."""
    for attr in ("name", "priority", "description", "counts"):
        if not hasattr(provider, attr):
            raise TypeError(f"a work provider needs the attribute {attr!r}")
    _PROVIDERS[provider.name] = provider
    return provider


def list_providers() -> list[str]:
    """Provider names, best (lowest priority) first."""
    return [p.name for p in sorted(_PROVIDERS.values(), key=lambda p: (p.priority, p.name))]


def get_provider(name: str) -> WorkProvider:
    """The provider called ``name``; :class:`~kerncast.InputError` lists the known ones."""
    if name not in _PROVIDERS:
        raise InputError(f"unknown work source {name!r}; the known ones are: "
                         f"{', '.join(list_providers())} (or 'auto': the best that answers)")
    return _PROVIDERS[name]


def work_counts(kernel: CorpusKernel, config: LaunchConfig, provider: str = "auto",
                language: str = "cuda") -> WorkCounts:
    """Count the work of one launch with ``provider``, or with the best that answers.

    Raises
    ------
    WorkUnavailable
        If the named provider, or with ``"auto"`` every provider, cannot answer; the
        message gives each provider's reason.
    """
    if provider != "auto":
        return get_provider(provider).counts(kernel, config, language)
    reasons = []
    for name in list_providers():
        try:
            return _PROVIDERS[name].counts(kernel, config, language)
        except WorkUnavailable as exc:
            reasons.append(f"{name}: {exc}")
    raise WorkUnavailable(f"no work source can count {kernel.name}: " + "; ".join(reasons))

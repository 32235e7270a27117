"""The one registry of measurement backends, each with what it can do.

A backend registers a :class:`BackendKind`: its name, the source language it runs, the
device it measures (a GPU, this machine's CPU, or a recorded dataset), the experiments
it can run (``None``: all), the clock monitor that suits it and how to make one. The
factory, the campaign and the command line ask the registry instead of testing names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kerncast._errors import unknown_name

__all__ = ["BACKEND_KINDS", "BackendKind", "backend_kind", "register_backend"]


@dataclass(frozen=True)
class BackendKind:
    """A kind of backend and its declared capabilities."""

    name: str
    language: str
    device: str  # "gpu", "cpu" (this machine's) or "recorded"
    experiments: frozenset[str] | None
    monitor: str  # "nvml", "cpu" or "none"
    make: Callable[..., Any]
    description: str

    def can_run(self, experiment: str) -> bool:
        return self.experiments is None or experiment in self.experiments


BACKEND_KINDS: dict[str, BackendKind] = {}


def register_backend(kind: BackendKind) -> BackendKind:
    """Add ``kind`` to the registry (a name registered twice is an error)."""
    if kind.name in BACKEND_KINDS and BACKEND_KINDS[kind.name] != kind:
        raise TypeError(f"backend name {kind.name!r} is taken")
    if kind.device not in ("gpu", "cpu", "recorded") or kind.monitor not in ("nvml", "cpu",
                                                                              "none"):
        raise TypeError(f"backend {kind.name!r}: device must be gpu, cpu or recorded and "
                        "monitor nvml, cpu or none")
    BACKEND_KINDS[kind.name] = kind
    return kind


def backend_kind(name: str) -> BackendKind:
    """The registered kind ``name``, or an error listing the known ones."""
    kind = BACKEND_KINDS.get(str(name))
    if kind is None:
        raise unknown_name("backend", name, BACKEND_KINDS)
    return kind

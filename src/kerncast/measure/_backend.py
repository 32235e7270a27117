"""The narrow hardware interface every measurement backend implements.

In the manner of Kernel Tuner, a backend only compiles, moves buffers, launches and
times; what is measured beside the time (counters, energy) comes from observers,
and what is done with the numbers is the campaign's business. Backends import their
GPU libraries lazily, so that ``import kerncast`` never pulls them in.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerncast.corpus import CorpusKernel, LaunchConfig

__all__ = ["Backend", "Compiled"]


@dataclass
class Compiled:
    """A kernel compiled for one backend and one set of defines."""

    kernel: CorpusKernel
    defines: dict[str, Any]
    handle: Any


class Backend(ABC):
    """Compile, upload, launch, synchronise, download, time."""

    name: str = "backend"
    language: str = "cuda"

    @abstractmethod
    def compile(self, kernel: CorpusKernel, config: LaunchConfig) -> Compiled:
        """Build the kernel with the config's defines (cached per define set)."""

    @abstractmethod
    def upload(self, args: dict[str, Any]) -> dict[str, Any]:
        """Device copies of the buffers in ``args``; scalars pass through."""

    @abstractmethod
    def launch(self, compiled: Compiled, config: LaunchConfig, dev_args: dict[str, Any]) -> None:
        """Enqueue one launch (asynchronous)."""

    @abstractmethod
    def synchronize(self) -> None:
        """Wait for all enqueued work."""

    @abstractmethod
    def download(self, dev_args: dict[str, Any], templates: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Host copies of the buffers named in ``templates`` (arrays of their shape and dtype)."""

    def run_once(self, kernel: CorpusKernel, config: LaunchConfig, args: dict[str, Any]) -> dict:
        """Compile, upload, launch once and return every out/inout buffer."""
        compiled = self.compile(kernel, config)
        dev = self.upload(args)
        self.launch(compiled, config, dev)
        self.synchronize()
        outs = {a.name: args[a.name] for a in kernel.spec.args
                if a.kind == "buffer" and a.intent != "in"}
        return self.download(dev, outs)

    @staticmethod
    def ordered(kernel: CorpusKernel, dev_args: dict[str, Any]) -> list[Any]:
        """Arguments in the order of the kernel's signature."""
        return [dev_args[a.name] for a in kernel.spec.args]

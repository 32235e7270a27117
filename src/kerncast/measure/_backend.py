"""The narrow hardware interface every measurement backend implements.

In the manner of Kernel Tuner, a backend only compiles, moves buffers, launches and
times; what is measured beside the time (counters, energy, clocks) comes from
observers, and what is done with the numbers is the harness's business
(:func:`kerncast.measure.measure_config`). Backends import their GPU libraries
lazily, so that ``import kerncast`` never pulls them in.

The primitives beyond compile/upload/launch/synchronize/download are the ones a
careful timing loop needs: ``write`` (poison an output), ``copy`` (restore an inout
buffer from a pristine device copy), ``time_launch`` (one launch timed by the
device's own timer, with work queued before it kept outside the interval),
``flush_l2``, ``memory_info`` and ``free``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from kerncast._errors import InputError, KerncastError
from kerncast.core import Kernel, Launch

__all__ = ["Backend", "CompileError", "Compiled", "DeviceMemoryError", "LaunchError", "Resources",
           "offset_slice"]


class CompileError(KerncastError):
    """The kernel's source did not compile (a ``compile_failed`` row)."""


class LaunchError(KerncastError):
    """A launch or synchronisation failed; the device context may be unusable."""


class DeviceMemoryError(KerncastError):
    """A device allocation failed (an ``out_of_memory`` row)."""


@dataclass(frozen=True)
class Resources:
    """What the compiled function uses, from its attributes (``None`` where unknown)."""

    registers: int | None = None
    static_shared: int | None = None
    local_bytes: int | None = None
    max_threads_per_block: int | None = None

    def columns(self) -> dict:
        return {"registers": self.registers, "static_shared": self.static_shared,
                "local_bytes": self.local_bytes}

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Compiled:
    """A kernel compiled for one backend (its defines and options included)."""

    kernel: Kernel
    defines: dict[str, Any]
    handle: Any
    resources: Resources = field(default_factory=Resources)


class Backend(ABC):
    """Compile, upload, launch, synchronise, download, time."""

    name: str = "backend"
    language: str = "cuda"
    #: "gpu" or "cpu": CPU devices have no L2 to flush and no memory clock.
    kind: str = "gpu"
    #: device spec key (``kerncast.devices``) or ``cpu:<model>``
    device_key: str = ""
    #: SMs (or compute units) the launches can use
    sm_count: int = 0
    #: bytes of the last-level cache, for input rotation and flushing
    l2_bytes: int = 0
    #: the L2 flush writes its buffer (leaving dirty lines) rather than only reading it
    flush_writes: bool = True
    #: how a sample can find the L2 (``kerncast.measure._samples``): ``warm``, ``cold``,
    #: and ``paid`` where :meth:`time_paid` can time the write-back of a launch's stores
    l2_states: tuple[str, ...] = ("warm", "cold")
    #: runs a kernel rewritten with block offsets (:func:`kerncast.frontend.offset_kernel`),
    #: so that a sample's blocks read the whole grid's size (``kerncast.measure._samples``)
    block_offsets: bool = False

    @abstractmethod
    def compile(self, kernel: Kernel) -> Compiled:
        """Build the kernel with its defines and options (cached per build).

        Raises
        ------
        CompileError
            With the compiler's log.
        """

    @abstractmethod
    def upload(self, args: dict[str, Any]) -> dict[str, Any]:
        """Device copies of the buffers in ``args``; scalars pass through."""

    @abstractmethod
    def launch(self, compiled: Compiled, launch: Launch, dev_args: dict[str, Any]) -> Any:
        """Enqueue one launch (asynchronous) with the arguments ``launch.names`` name."""

    @abstractmethod
    def synchronize(self) -> None:
        """Wait for all enqueued work."""

    @abstractmethod
    def download(self, dev_args: dict[str, Any], templates: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Host copies of the buffers named in ``templates`` (arrays of their shape and dtype)."""

    def write(self, dev: Any, host: np.ndarray) -> None:
        """Overwrite the device buffer ``dev`` with ``host`` (same size)."""
        raise NotImplementedError(f"{self.name} cannot write buffers")

    def copy(self, dst: Any, src: Any) -> None:
        """Enqueue a device-to-device copy of a whole buffer."""
        raise NotImplementedError(f"{self.name} cannot copy buffers")

    def offset(self, dev: Any, byte_offset: int) -> Any:
        """A pointer ``byte_offset`` bytes into the device buffer ``dev`` (a view argument)."""
        raise InputError(f"the {self.name} backend cannot pass a pointer into a buffer (a view "
                         "argument); measure with --backend cupy or driver")

    def free(self, dev_args: dict[str, Any]) -> None:
        """Release the device buffers in ``dev_args`` (default: leave it to the collector)."""

    def activate(self) -> None:
        """Make this backend's device (or context) the current one, where one process
        drives several GPUs through a library with a current device, as CuPy, or keeps
        several contexts of one GPU alive, as a campaign worker its SM counts."""

    def deactivate(self) -> None:
        """Put back what was current before this backend took over (the undoing of
        :meth:`activate`), so that another backend can be made or used beside it."""

    def memory_info(self) -> tuple[int, int]:
        """(free, total) bytes of device memory."""
        raise NotImplementedError(f"{self.name} cannot report device memory")

    def time_launch(self, compiled: Compiled, launch: Launch, dev_args: dict[str, Any],
                    before: Callable[[], None] | None = None) -> float:
        """Seconds of one launch by the device's timer; ``before`` runs outside the interval."""
        raise NotImplementedError(f"{self.name} cannot time launches")

    def time_paid(self, compiled: Compiled, launch: Launch, dev_args: dict[str, Any],
                  before: Callable[[], None] | None = None) -> float:
        """Seconds of one launch and of writing back the dirty lines it leaves in the L2;
        ``before`` runs outside the interval (backends with ``paid`` in ``l2_states``)."""
        raise NotImplementedError(f"{self.name} cannot time the write-back of a launch")

    def flush_l2(self, writes: bool | None = None) -> None:
        """Enqueue work that evicts the inputs from the last-level cache (writing its
        buffer unless ``writes`` or else ``flush_writes`` says not to)."""

    def launch_many(self, compiled: Compiled, launch: Launch, dev_args: dict[str, Any],
                    count: int) -> int:
        """Enqueue ``count`` launches back to back, wait for them; return the launches made."""
        for _ in range(count):
            self.launch(compiled, launch, dev_args)
        self.synchronize()
        return count

    def describe(self) -> dict[str, Any]:
        """Provenance: device_name, driver_version, runtime_version, backend, tool_versions."""
        return {"device_name": "", "driver_version": "", "runtime_version": "",
                "backend": self.name, "tool_versions": {}}

    def close(self) -> None:
        """Release the context and everything in it."""

    def run_once(self, job: Any, args: dict[str, Any]) -> dict:
        """Compile, upload, launch once and return every out/inout buffer of a
        :class:`~kerncast.measure.Job`."""
        from kerncast.measure._session import upload_args  # noqa: PLC0415 (cycle)

        compiled = self.compile(job.kernel)
        dev = upload_args(self, args)
        self.launch(compiled, job.launch, dev)
        self.synchronize()
        outs = {n: args[n] for n in job.launch.names
                if job.intents.get(n) in ("out", "inout") and isinstance(args[n], np.ndarray)}
        return self.download(dev, outs)

    def measure(self, kernel: Any, config: Any = None, **options: Any) -> dict:
        """Measure one launch (a job, or a corpus kernel and configuration); a ``times`` row
        (see :func:`measure_config`)."""
        from kerncast.measure._run import measure_config  # noqa: PLC0415 (cycle)

        return measure_config(self, kernel, config, **options)

    @staticmethod
    def ordered(launch: Launch, dev_args: dict[str, Any]) -> list[Any]:
        """Arguments in the order of the kernel's signature."""
        return [dev_args[n] for n in launch.names]


def offset_slice(backend: Backend, dev: dict[str, Any], launch: Launch,
                 first: tuple[int, int, int], grid: tuple[int, int, int]) -> Launch:
    """The launch of the blocks ``first`` to ``first + grid`` of ``launch`` on ``backend``,
    through :func:`kerncast.frontend.offset_kernel`: on a CUDA backend the offsets and the
    whole grid's size go into ``dev`` (the uploaded arguments) beside the kernel's own; on
    an OpenCL one, ``first`` times the block becomes the backend's global work offset,
    which stays until it is set again (``None`` for launches without offsets)."""
    from kerncast.frontend import OFFSET_PARAMS, offset_launch  # noqa: PLC0415 (on use)

    cuda = backend.language == "cuda"
    if cuda:
        for name, value in zip(OFFSET_PARAMS, (*first, *launch.grid)):
            dev[name] = np.uint32(value)
    else:
        offset = tuple(f * b for f, b in zip(first, launch.block))
        backend.global_offset = offset  # type: ignore[attr-defined]  # the OpenCL backends
    return offset_launch(launch, first, grid, cuda)

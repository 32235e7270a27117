"""Pieces shared by the CUDA backends: helper kernels, options, messages.

Two helper kernels support the timing loop. ``kc_spin`` busy-waits for a number of
SM cycles (``clock64``); queued ahead of the start event it keeps the GPU busy while
the host enqueues the event, the launch and the stop event, so that the host's launch
gaps stay out of the interval (an empty kernel reads 3.8 µs with it on an H100, 7.1 µs
without). ``kc_flush`` reads and writes every word of a buffer twice the L2's size,
evicting the kernel's data before a cold-cache run; it leaves the L2 full of dirty
lines, which the next kernel writes back as it evicts them. ``kc_flush_clean`` only
reads the buffer (a zero-filled one: its store never happens), so the L2 writes its
dirty lines back during the flush and is left holding clean ones.

:class:`PaidTiming` times a launch together with the write-back of its own stores: a
reading flush, then the launch and a second reading flush in one interval, less that
flush's time when the L2 held only clean lines. A sample's stores then cost it what
they cost the full run (which writes its data back as it goes), where a sample after
the writing flush pays for the flush's dirty lines and one after the reading flush
leaves its own in the L2 (tools/writeback_probe.py measured the three on the H100).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from kerncast._errors import InputError, ToolchainError
from kerncast.core import Kernel
from kerncast.devices import get_device

__all__ = ["HELPERS_SOURCE", "NO_GPU_HINT", "PaidTiming", "entry_symbol", "find_function",
           "flush_launch", "nvrtc_options", "resolve_device_key", "spin_cycles"]


def find_function(get: Any, kernel: Kernel) -> Any:
    """``get(symbol)`` for the kernel's entry: its plain name first, then its mangled one."""
    try:
        return get(kernel.name)
    except Exception:  # noqa: BLE001 (CuPy's and the driver's not-found errors differ)
        symbol = entry_symbol(kernel)
        if symbol == kernel.name:
            raise
        return get(symbol)

HELPERS_SOURCE = r"""
extern "C" __global__ void kc_spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) { }
}

extern "C" __global__ void kc_flush(unsigned int* buf, unsigned long long n) {
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) buf[i] = buf[i] * 1664525u + 1013904223u;
}

extern "C" __global__ void kc_flush_clean(const unsigned int* buf, unsigned long long n,
                                          unsigned int* sink) {
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && buf[i] == 0x9e3779b9u) sink[0] = (unsigned int)i;
}

extern "C" __global__ void kc_empty() { }
"""

def flush_launch(flush_writes: bool, buf: Any, n: int) -> tuple[str, tuple]:
    """The helper kernel and the arguments of an L2 flush over ``buf`` (``n`` words):
    ``kc_flush``, or with ``flush_writes`` off ``kc_flush_clean`` (which reads only)."""
    if flush_writes:
        return "kc_flush", (buf, np.uint64(n))
    return "kc_flush_clean", (buf, np.uint64(n), buf)


#: timings of the reading flush behind :meth:`PaidTiming.drain_seconds`
DRAIN_REPS = 31


class PaidTiming:
    """``time_paid`` for a backend that times enqueued work with ``_timed(enqueue,
    before)`` and flushes with ``flush_l2(writes)``."""

    l2_states = ("warm", "cold", "paid")
    _drain_s: float | None = None

    def _timed(self, enqueue: Callable[[], None], before: Callable[[], None] | None) -> float:
        raise NotImplementedError

    def time_paid(self, compiled, config, dev_args, before=None) -> float:
        def enqueue() -> None:
            self.launch(compiled, config, dev_args)
            self.flush_l2(writes=False)

        return self._timed(enqueue, before) - self.drain_seconds()

    def drain_seconds(self) -> float:
        """Median seconds of the reading flush after another one (an L2 of clean lines),
        measured once."""
        if self._drain_s is None:
            def clean() -> None:
                self.flush_l2(writes=False)

            self._drain_s = float(np.median([self._timed(clean, clean)
                                             for _ in range(DRAIN_REPS)]))
        return self._drain_s


NO_GPU_HINT = ("measure on a CPU with --backend pocl (OpenCL kernels through PoCL), or read "
               "recorded measurements with --backend replay --dataset data/<device>")

SPIN_US = 50.0


def nvrtc_options(kernel: Kernel) -> tuple[str, ...]:
    """NVRTC options of a kernel: C++17, its defines, and the user's options for the front
    end (the target is the GPU's, and ``-maxrregcount`` passes on as NVRTC takes it)."""
    regs = [o.replace("--maxrregcount=", "-maxrregcount=") for o in kernel.ptxas_options()
            if o.startswith("--maxrregcount=")]
    return ("-std=c++17", *(f"-D{k}={_define(v)}" for k, v in sorted(kernel.defines.items())),
            *kernel.compile_options(), *regs, *include_flags(kernel))


def include_flags(kernel: Kernel) -> tuple[str, ...]:
    """``-I`` flags for a source that includes headers: its own directory, the user's
    include directories, and the CUDA toolkit's headers (``cuda_fp16.h``), which NVRTC
    does not search by itself."""
    if "#include" not in kernel.source:
        return ()
    dirs = [*([kernel.path.parent.resolve()] if kernel.path is not None else []),
            *(d.resolve() for d in kernel.include_dirs)]
    return tuple(f"-I{d}" for d in [*dirs, *cuda_include_dirs()])


def cuda_include_dirs() -> list[Path]:
    """The CUDA headers: the NVIDIA wheels', ``$CUDA_HOME``'s, or those beside nvcc."""
    from kerncast.frontend import wheel_root  # noqa: PLC0415 (the frontend loads on use)

    found = []
    root = wheel_root()
    nvcc = shutil.which("nvcc")
    for base in (root, os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 Path(nvcc).resolve().parent.parent if nvcc else None, "/usr/local/cuda"):
        if base and (Path(base) / "include" / "cuda_fp16.h").is_file():
            found.append(Path(base) / "include")
            break
    return found


def entry_symbol(kernel: Kernel) -> str:
    """The symbol of the kernel's entry in the module NVRTC builds: for a C++ kernel its
    mangled name (from the frontend's build with the same options), else its name."""
    from kerncast.frontend import build  # noqa: PLC0415 (the frontend loads on use)

    try:
        return build(kernel).kernel(kernel.name).entry
    except Exception:  # noqa: BLE001 (a build error shows in the backend's own compile)
        return kernel.name


def _define(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def spin_cycles(clock_mhz: float | None, micros: float = SPIN_US) -> int:
    """SM cycles that take ``micros`` at ``clock_mhz`` (2 GHz when unknown)."""
    mhz = clock_mhz if clock_mhz and clock_mhz > 0 else 2000.0
    return int(micros * mhz)


def resolve_device_key(device_name: str, wanted: str | None) -> str:
    """The spec key of the GPU at hand, checked against the one the user named.

    Raises
    ------
    InputError
        When the GPU has no spec, or is not the device the user asked for.
    """
    try:
        actual = get_device(device_name).key
    except InputError:
        raise InputError(f"the GPU {device_name!r} has no kerncast device spec; add one under "
                         "devices/specs/ (or an alias) before measuring it") from None
    if wanted is not None and get_device(wanted).key != actual:
        raise InputError(f"--device {wanted} was asked for, but the GPU here is {device_name!r} "
                         f"({actual}); pass --device {actual}")
    return actual


def no_cuda(what: str) -> ToolchainError:
    """The error for a machine without CUDA."""
    return ToolchainError(f"{what}; {NO_GPU_HINT}")

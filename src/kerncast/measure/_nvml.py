"""NVML, read only: clocks for provenance, and the energy observer.

Nothing here changes a GPU setting. :class:`Nvml` reads the SM and memory clocks,
the driver and CUDA versions, the power draw and the total-energy counter.
:class:`NvmlEnergyObserver` measures a kernel's average power and energy from the
total-energy counter (millijoules) over a loop of launches lasting at least 200 ms,
with power readings taken alongside as a cross-check.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from kerncast._errors import InputError, ToolchainError

__all__ = ["Nvml", "NvmlEnergyObserver", "gpu_count", "gpu_name", "try_nvml"]


def _import_pynvml():
    try:
        import pynvml  # noqa: PLC0415 (optional dependency: nvidia-ml-py)
    except ImportError:
        raise ToolchainError("NVML is not available: install nvidia-ml-py "
                             "(pip install 'kerncast[cuda]')") from None
    return pynvml


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class Nvml:
    """Read-only NVML access to one GPU.

    Parameters
    ----------
    index
        NVML device index (used when ``pci_bus_id`` is not given or not found).
    pci_bus_id
        The CUDA device's PCI bus id, so that NVML reads the GPU CUDA runs on.
    """

    def __init__(self, index: int = 0, pci_bus_id: str | None = None):
        nv = _import_pynvml()
        self._nv = nv
        try:
            nv.nvmlInit()
        except nv.NVMLError as exc:
            raise ToolchainError(f"NVML could not start ({exc}); is the NVIDIA driver "
                                 "loaded?") from None
        handle = None
        if pci_bus_id:
            try:
                handle = nv.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
            except nv.NVMLError:
                handle = None
        self.handle = handle if handle is not None else self._visible(nv, index)

    @staticmethod
    def _visible(nv: Any, index: int) -> Any:
        """The handle of CUDA's device ``index``: the GPU that ``CUDA_VISIBLE_DEVICES``
        names at that place (a UUID, or an index in PCI bus order, which is NVML's)."""
        visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
                   if v.strip()]
        if index < len(visible):
            named = visible[index]
            try:
                if named.startswith(("GPU-", "MIG-")):
                    return nv.nvmlDeviceGetHandleByUUID(named)
                return nv.nvmlDeviceGetHandleByIndex(int(named))
            except (nv.NVMLError, ValueError):
                pass
        return nv.nvmlDeviceGetHandleByIndex(index)

    def clocks(self) -> tuple[float, float]:
        """(SM clock, memory clock) in MHz, as the GPU runs now."""
        nv = self._nv
        try:
            return (float(nv.nvmlDeviceGetClockInfo(self.handle, nv.NVML_CLOCK_SM)),
                    float(nv.nvmlDeviceGetClockInfo(self.handle, nv.NVML_CLOCK_MEM)))
        except nv.NVMLError:
            return math.nan, math.nan

    def name(self) -> str:
        return _text(self._nv.nvmlDeviceGetName(self.handle))

    def driver_version(self) -> str:
        return _text(self._nv.nvmlSystemGetDriverVersion())

    def cuda_version(self) -> str:
        version = int(self._nv.nvmlSystemGetCudaDriverVersion_v2())
        return f"{version // 1000}.{version % 1000 // 10}"

    def energy_mj(self) -> int:
        """The total-energy counter since the driver loaded, millijoules."""
        return int(self._nv.nvmlDeviceGetTotalEnergyConsumption(self.handle))

    def power_w(self) -> float:
        """The power draw NVML reports now, watts."""
        return self._nv.nvmlDeviceGetPowerUsage(self.handle) / 1000.0


def try_nvml(pci_bus_id: str | None = None) -> Nvml | None:
    """An :class:`Nvml`, or ``None`` where NVML cannot be used."""
    try:
        return Nvml(pci_bus_id=pci_bus_id)
    except Exception:  # noqa: BLE001 (no NVML: provenance falls back)
        return None


def gpu_count() -> int | None:
    """How many GPUs NVML sees (``None`` where NVML cannot be used)."""
    nvml = try_nvml()
    if nvml is None:
        return None
    return int(nvml._nv.nvmlDeviceGetCount())


def gpu_name(gpu: str) -> str | None:
    """The name of ``gpu`` (an index in PCI bus order, or a UUID); ``None`` where NVML
    cannot be used.

    Raises
    ------
    InputError
        When NVML has no such GPU.
    """
    nvml = try_nvml()
    if nvml is None:
        return None
    nv = nvml._nv
    try:
        handle = nv.nvmlDeviceGetHandleByUUID(gpu) if gpu.startswith(("GPU-", "MIG-")) \
            else nv.nvmlDeviceGetHandleByIndex(int(gpu))
    except (nv.NVMLError, ValueError):
        raise InputError(f"--gpus: there is no GPU {gpu} here ({nv.nvmlDeviceGetCount()} "
                         "GPUs; nvidia-smi -L lists them)") from None
    return _text(nv.nvmlDeviceGetName(handle))


class _PowerSampler(threading.Thread):
    def __init__(self, nvml: Nvml, period_s: float):
        super().__init__(daemon=True)
        self.nvml, self.period_s = nvml, period_s
        self.readings: list[float] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            try:
                self.readings.append(self.nvml.power_w())
            except Exception:  # noqa: BLE001 (a failed reading is just missing)
                pass
            self._stop_event.wait(self.period_s)

    def stop(self) -> list[float]:
        self._stop_event.set()
        self.join(timeout=1.0)
        return self.readings


class NvmlEnergyObserver:
    """Average power and energy of a kernel from NVML's total-energy counter.

    Parameters
    ----------
    nvml
        The GPU's :class:`Nvml`.
    min_duration_s
        The loop of launches lasts at least this long (the counter updates every few
        milliseconds; 200 ms keeps its granularity under a few percent).
    sample_period_s
        Interval of the power readings taken during the loop.
    clock
        Wall clock (a fake in tests).
    """

    def __init__(self, nvml: Nvml, min_duration_s: float = 0.3, sample_period_s: float = 0.01,
                 max_launches: int = 2_000_000, clock: Callable[[], float] = time.perf_counter):
        self.nvml = nvml
        self.min_duration_s = min_duration_s
        self.sample_period_s = sample_period_s
        self.max_launches = max_launches
        self.clock = clock

    def launches_for(self, time_per_launch_s: float) -> int:
        """Launches that keep the loop above ``min_duration_s``."""
        if not time_per_launch_s or time_per_launch_s <= 0 or math.isnan(time_per_launch_s):
            return 1000
        wanted = math.ceil(1.2 * self.min_duration_s / time_per_launch_s)
        return int(min(self.max_launches, max(1, wanted)))

    def measure(self, run: Callable[[int], int], launches: int,
                kernel_time_s: float | None = None) -> dict[str, Any]:
        """Run ``run(launches)`` (enqueue, then wait; returns launches done) and measure it.

        Returns the ``energy`` columns: launches, duration_s, energy_j,
        energy_per_launch_j, avg_power_w, power samples, idle_power_w,
        time_per_launch_s, gpu_busy_fraction.
        """
        idle = self.nvml.power_w()
        sampler = _PowerSampler(self.nvml, self.sample_period_s)
        e0, t0 = self.nvml.energy_mj(), self.clock()
        sampler.start()
        done = run(launches)
        t1, e1 = self.clock(), self.nvml.energy_mj()
        readings = sampler.stop()
        duration = t1 - t0
        energy = (e1 - e0) / 1000.0
        busy = (done * kernel_time_s / duration) if kernel_time_s and duration > 0 else math.nan
        return {
            "launches": int(done), "duration_s": duration, "energy_j": energy,
            "energy_per_launch_j": energy / done if done else math.nan,
            "avg_power_w": energy / duration if duration > 0 else math.nan,
            "power_samples_mean_w": sum(readings) / len(readings) if readings else math.nan,
            "power_samples_max_w": max(readings) if readings else math.nan,
            "power_samples": len(readings), "idle_power_w": idle,
            "time_per_launch_s": duration / done if done else math.nan,
            "gpu_busy_fraction": busy,
        }

"""NVML, read only: clocks for provenance, and the energy observer.

Nothing here changes a GPU setting. :class:`Nvml` reads the SM and memory clocks,
the driver and CUDA versions, the power draw and the total-energy counter.
:class:`NvmlEnergyObserver` measures a kernel's average power and energy from the
total-energy counter (millijoules) over a loop of launches, between two of the counter's
updates while the loop runs, with power readings taken alongside as a cross-check.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from kerncast._errors import InputError, ToolchainError

__all__ = ["Nvml", "NvmlEnergyObserver", "gpu_count", "gpu_name", "try_nvml", "window_power"]


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


#: The key of :meth:`NvmlEnergyObserver.measure`'s result that is not a column: the seconds
#: between the counter updates the power was read between (``None``: before and after).
WINDOW_KEY = "power_window_s"


class _CounterPoller(threading.Thread):
    """Reads the total-energy counter every ``period_s`` on its own thread (NVML needs no
    CUDA context, so the launches stay on the thread whose context they use) and keeps
    ``(time, millijoules)`` at each change."""

    def __init__(self, nvml: Nvml, period_s: float, clock: Callable[[], float]):
        super().__init__(daemon=True)
        self.nvml, self.period_s, self.clock = nvml, period_s, clock
        self.ticks: list[tuple[float, float]] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        last = None
        while not self._stop_event.is_set():
            try:
                energy = self.nvml.energy_mj()
            except Exception:  # noqa: BLE001 (a failed reading is just missing)
                energy = last
            if last is not None and energy != last:
                self.ticks.append((self.clock(), energy))
            last = energy
            self._stop_event.wait(self.period_s)

    def stop(self) -> list[tuple[float, float]]:
        self._stop_event.set()
        self.join(timeout=1.0)
        return self.ticks


def window_power(ticks: list[tuple[float, float]], start: float, warmup_s: float
                 ) -> tuple[float, float] | None:
    """Average power (W) and the window's length (s) between the counter's first update at
    least ``warmup_s`` after ``start`` and its last update; ``ticks`` are ``(time s,
    energy mJ)`` at each update seen while the loop ran. ``None`` with fewer than two."""
    window = [(t, e) for t, e in ticks if t - start >= warmup_s]
    if len(window) < 2 or window[-1][0] <= window[0][0]:
        return None
    (t0, e0), (t1, e1) = window[0], window[-1]
    return (e1 - e0) / 1000.0 / (t1 - t0), t1 - t0


class NvmlEnergyObserver:
    """Average power and energy of a kernel from NVML's total-energy counter.

    The counter moves in steps, so the energy read just before and just after a loop is
    off by up to a step either way: on an H100, two runs of the same items with loops of
    0.36 s differed by 11% of board power at the median, 30% at the 90th percentile. So a
    thread polls the counter while the loop runs, and the power is the energy between the
    counter's first update ``warmup_s`` into the loop (clocks and power have ramped up)
    and its last update before the loop ended, over the time between those updates. The
    loop's energy is that power times the loop's duration. Where the counter moved fewer
    than twice in the window, the reading before and after the loop stands instead.

    Parameters
    ----------
    nvml
        The GPU's :class:`Nvml`.
    min_duration_s
        The window of the loop that is measured lasts at least this long; the loop lasts
        ``warmup_s`` more.
    warmup_s
        The start of the loop that is not measured.
    sample_period_s
        Interval of the power readings taken during the loop.
    poll_s
        Interval of the counter's readings.
    clock
        Wall clock (a fake in tests).
    """

    def __init__(self, nvml: Nvml, min_duration_s: float = 0.8, sample_period_s: float = 0.01,
                 max_launches: int = 2_000_000, clock: Callable[[], float] = time.perf_counter,
                 warmup_s: float = 0.2, poll_s: float = 0.001):
        self.nvml = nvml
        self.min_duration_s = min_duration_s
        self.warmup_s = warmup_s
        self.sample_period_s = sample_period_s
        self.poll_s = poll_s
        self.max_launches = max_launches
        self.clock = clock

    @property
    def loop_s(self) -> float:
        """How long a loop must last: the warm-up and the measured window."""
        return self.warmup_s + self.min_duration_s

    def launches_for(self, time_per_launch_s: float) -> int:
        """Launches that keep the loop above :attr:`loop_s`."""
        if not time_per_launch_s or time_per_launch_s <= 0 or math.isnan(time_per_launch_s):
            return 1000
        wanted = math.ceil(1.2 * self.loop_s / time_per_launch_s - 1e-9)
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
        poller = _CounterPoller(self.nvml, self.poll_s, self.clock)
        sampler.start()
        poller.start()
        try:
            done = run(launches)
        finally:  # a failed loop leaves no thread reading the GPU
            ticks = poller.stop()
            t1, e1 = self.clock(), self.nvml.energy_mj()
            readings = sampler.stop()
        duration = t1 - t0
        energy = (e1 - e0) / 1000.0
        window = window_power(ticks, t0, self.warmup_s)
        if window is not None:
            energy = window[0] * duration
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
            WINDOW_KEY: round(window[1], 3) if window is not None else None,
        }

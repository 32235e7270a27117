"""Energy rows: a kernel's average power and energy per launch, from NVML.

The kernel's time is taken first (a short timed loop), then enough launches are
queued back to back to keep the GPU busy for at least the observer's minimum
duration (captured into a CUDA graph where the backend can, so that the host's
launch rate does not limit short kernels); NVML's total-energy counter is read
before and after. If the loop came out shorter than the minimum, it is repeated
once with proportionally more launches. A loop that still left the GPU idle for more
than a tenth of its time (the host could not launch as fast as the kernel ran) is a
``host_bound`` row: its readings are kept, but its power is not the kernel's.
"""

from __future__ import annotations

import math
from typing import Any

from kerncast.corpus import CorpusKernel, LaunchConfig
from kerncast.measure._backend import Backend, LaunchError
from kerncast.measure._nvml import WINDOW_KEY, NvmlEnergyObserver
from kerncast.measure._prep import Prepared
from kerncast.measure._provenance import NullMonitor, row_provenance, static_provenance
from kerncast.measure._run import failure_row, launch_columns
from kerncast.measure._session import Failure, LaunchSession
from kerncast.measure._timing import TimingPolicy, time_repeatedly

__all__ = ["BUSY_MIN", "host_bound", "measure_energy"]

# An energy loop must keep the GPU busy for at least this share of its time (launches x
# median launch time over the loop's duration); below it, the gaps the host leaves
# between launches, not the kernel, set the average power.
BUSY_MIN = 0.9

QUICK = TimingPolicy(warmup=1, warmup_s=0.0, min_reps=3, max_reps=20, budget_s=0.2,
                     rotate_inputs=False, check=False)


def _loop(session: LaunchSession, observer: NvmlEnergyObserver, kernel_time: float) -> dict:
    backend = session.backend

    def run(count: int) -> int:
        session.restore()
        return backend.launch_many(session.compiled, session.launch, session.dev, count)

    result = observer.measure(run, observer.launches_for(kernel_time), kernel_time)
    if result["duration_s"] < observer.loop_s and result["launches"]:
        scale = 1.3 * observer.loop_s / max(result["duration_s"], 1e-6)
        more = min(observer.max_launches, math.ceil(result["launches"] * scale))
        result = observer.measure(run, more, kernel_time)
    return result


def host_bound(row: dict) -> str | None:
    """Why an ``ok`` energy row does not measure its kernel's power (its loop kept the GPU
    busy for less than :data:`BUSY_MIN` of its time), or None where it does."""
    busy = row.get("gpu_busy_fraction")
    if row.get("status") != "ok" or busy is None or not busy < BUSY_MIN:
        return None
    per_launch = row.get("time_per_launch_s") or math.nan
    return (f"the loop kept the GPU busy for {busy:.0%} of its time ({per_launch * 1e6:.1f} us "
            f"a launch): the host's launch rate, not the kernel, set its power; measure it "
            f"again with a backend that replays a captured graph (--retry-failed)")


def measure_energy(backend: Backend, kernel: CorpusKernel, config: LaunchConfig,
                   observer: NvmlEnergyObserver, *, prepared: Prepared | None = None,
                   seed: int = 0, monitor: Any = None, prep_dir: str | None = None) -> dict:
    """One ``energy`` row for a launch configuration (a failure is a row too)."""
    monitor = monitor or NullMonitor()
    row = launch_columns(kernel, config, backend.language, backend.device_key, backend.sm_count)
    static = static_provenance(backend)
    before = monitor.clocks()
    row.update(launches=0, power_samples=0)
    try:
        with LaunchSession(backend, kernel, config, prepared=prepared, seed=seed,
                           prep_dir=prep_dir) as session:
            row.update(session.resources)
            stats = time_repeatedly(
                lambda i: backend.time_launch(session.compiled, session.launch, session.dev,
                                              session.restore if session.inout else None), QUICK)
            row.update(_loop(session, observer, stats.median), status="ok", error="")
            why = host_bound(row)
            if why:
                row.update(status="host_bound", error=why)
    except Failure as exc:
        failure_row(row, exc.status, exc.error)
    except LaunchError as exc:
        failure_row(row, "launch_failed", str(exc))
    for name in ("repetitions", "converged", "warmup"):
        row.pop(name, None)
    window = row.pop(WINDOW_KEY, None)  # how the power was read, as provenance
    tools = dict(static.get("tool_versions", {}))
    if row.get("status") in ("ok", "host_bound"):
        tools[WINDOW_KEY] = "loop" if window is None else f"{window:.3f}"
    row.update(row_provenance({**static, "tool_versions": tools}, before, monitor.clocks(),
                              seed))
    return row

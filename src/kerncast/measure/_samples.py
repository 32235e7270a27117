"""Sampled runs for the sampling model: the first k·Psat·N_SM blocks of a launch.

Psat is the number of blocks resident on one SM (:func:`kerncast.devices.occupancy`
with the kernel's real registers and shared memory) and N_SM the SMs in use, so a
sample of multiplier k runs k full waves of blocks. The multipliers are 1, 2, 3, 4,
5, then doubling (10, 20, 40, ...) until a sample covers at least 5% of the full
launch's blocks or takes 200 µs (on a 132-SM GPU a few waves take 5-20 µs, too close
to the launch floor to extrapolate from). On a CPU device (PoCL), whose launch floor is
50-100 µs, the time bound is also at least 20 times the first sample. Multi-dimensional
grids are cut into whole rows of blocks: ``grid_y' = ceil(K / grid_x)`` with the same
``grid_x`` (and whole x-y planes for 3-D grids). Every sample is timed with each L2 state
the backend has: ``warm`` (repeated launches), ``cold`` (a kernel writing twice the L2's
size runs before each launch, outside the timed interval, with the busy-wait kernel
between) and, on the CUDA backends, ``paid`` (a flush that only reads before the launch,
and the write-back of the launch's own stores timed with it: what its stores cost the
full run, which writes back as it goes, where a ``cold`` sample also pays for the
flush's dirty lines).

:func:`measure_paid` times the ladder ``paid`` only, for datasets whose samples were
recorded before that state existed (the ``samples-paid`` experiment).

:func:`measure_full` times the whole grid the way a cold sample is timed (a row with
``k`` 0 and ``grid_fraction`` 1): the direct measurement that a sampler falls back on
where its samples cannot be trusted, or where the grid is too short to sample, so that
a dataset can replay what live mode does.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterator
from typing import Any

from kerncast._errors import InputError
from kerncast.core import Launch
from kerncast.measure._backend import Backend, LaunchError
from kerncast.measure._job import as_job
from kerncast.measure._prep import Prepared
from kerncast.measure._provenance import NullMonitor, row_provenance, static_provenance
from kerncast.measure._run import failure_row, launch_columns
from kerncast.measure._session import Failure, LaunchSession
from kerncast.measure._timing import TimingPolicy, time_repeatedly
from kerncast.devices import occupancy

__all__ = ["SAMPLE_MAX_FRACTION", "SAMPLE_MAX_SECONDS", "full_grid_columns", "measure_full",
           "measure_paid", "measure_samples", "multipliers", "resident_blocks", "sampled_grid"]

SAMPLE_MAX_FRACTION = 0.05
SAMPLE_MAX_SECONDS = 200e-6
#: on CPU devices a sample must also take this many times the first one
CPU_FLOOR_MULTIPLE = 20


def multipliers() -> Iterator[int]:
    """1, 2, 3, 4, 5, 10, 20, 40, ..."""
    return itertools.chain(range(1, 6), (5 * 2 ** i for i in itertools.count(1)))


def sampled_grid(grid: tuple[int, ...], blocks: int) -> tuple[int, int, int]:
    """The grid of the first ``blocks`` blocks, cut into whole rows (or planes)."""
    gx, gy, gz = (list(grid) + [1, 1, 1])[:3]
    blocks = max(1, int(blocks))
    if blocks >= gx * gy * gz:
        return gx, gy, gz
    if gy == 1 and gz == 1:
        return blocks, 1, 1
    if blocks <= gx * gy:
        return gx, min(gy, math.ceil(blocks / gx)), 1
    return gx, gy, min(gz, math.ceil(blocks / (gx * gy)))


def _on_cpu(backend: Backend) -> bool:
    return backend.kind != "gpu" or backend.device_key.startswith("cpu:")


def resident_blocks(backend: Backend, config: Launch, resources: dict) -> int:
    """Psat: resident blocks per SM (1 work-group per compute unit on CPU devices)."""
    if _on_cpu(backend):
        return 1

    shared = (resources.get("static_shared") or 0) + config.dynamic_shared
    return occupancy(backend.device_key, config.threads_per_block,
                     resources.get("registers") or 0, shared).blocks_per_sm


def ladder(config: Launch, psat: int, sm_count: int) -> list[dict]:
    """Every sample a launch has: one per multiplier whose grid (cut into whole rows or
    planes) differs from the previous one and stays short of the full grid."""
    rungs, previous = [], None
    for k in multipliers():
        wanted = k * psat * sm_count
        grid = sampled_grid(config.grid, wanted)
        launched = math.prod(grid)
        if launched >= config.blocks:
            return rungs
        if grid != previous:
            rungs.append({"k": k, "psat": psat, "blocks_requested": wanted,
                          "blocks_launched": launched, "grid_fraction": launched / config.blocks,
                          "sample_grid_x": grid[0], "sample_grid_y": grid[1],
                          "sample_grid_z": grid[2]})
        previous = grid


def _full_rung(config: Launch, psat: int) -> dict:
    rung = {**full_grid_columns(config), "psat": psat}
    del rung["l2_state"]
    return rung


def time_rung(session: LaunchSession, config: Launch, rung: dict, state: str,
              policy: TimingPolicy) -> dict:
    """One sample timed with a ``warm``, ``cold`` or ``paid`` L2: the rung's columns and
    timing."""
    backend = session.backend
    grid = (rung["sample_grid_x"], rung["sample_grid_y"], rung["sample_grid_z"])
    sample = dataclasses.replace(session.launch, grid=grid)
    timer = backend.time_paid if state == "paid" else backend.time_launch

    def before() -> None:
        session.restore()
        if state != "warm":
            backend.flush_l2(writes=state == "cold")

    stats = time_repeatedly(lambda i: timer(session.compiled, sample, session.dev, before), policy)
    return {**rung, "l2_state": state, **stats.columns()}


def _sample_rows(session: LaunchSession, config: Launch, psat: int,
                 policy: TimingPolicy, states: tuple[str, ...]) -> Iterator[dict]:
    """The ladder's samples timed in each of ``states``, up to the rung where the first
    state's time (or the share of the grid) says the samples are long enough."""
    backend, bound = session.backend, SAMPLE_MAX_SECONDS
    for rung in ladder(config, psat, backend.sm_count):
        timed = [time_rung(session, config, rung, state, policy) for state in states]
        first = timed[0]["time_median_s"]
        if rung["k"] == 1 and _on_cpu(backend):
            bound = max(SAMPLE_MAX_SECONDS, CPU_FLOOR_MULTIPLE * first)
        yield from timed
        if rung["k"] >= 5 and (rung["grid_fraction"] >= SAMPLE_MAX_FRACTION or first >= bound):
            return


def measure_samples(backend: Backend, kernel: Any, config: Any = None, *,
                    prepared: Prepared | None = None, policy: TimingPolicy | None = None,
                    seed: int = 0, monitor: Any = None, prep_dir: str | None = None,
                    choose: Callable[[list[dict], Callable[[int, str], float]], Any] | None = None,
                    states: tuple[str, ...] | None = None) -> list[dict]:
    """Sampled runs of one launch configuration: ``samples`` rows (a failure is one row).

    Without ``choose`` every sample of the ladder runs in each of ``states`` (by default
    every L2 state the backend has). With it, only
    those it asks for: ``choose(rungs, time)`` gets the ladder (a dict per sample, then
    the full grid with ``k`` 0) and ``time(i, l2_state)``, which runs rung ``i`` and
    returns its median seconds; what ``choose`` returns is dropped. ``kernel`` is a
    :class:`~kerncast.measure.Job`, or a corpus kernel at ``config``."""
    job = as_job(kernel, config, backend.language)
    config = job.launch
    policy = policy or TimingPolicy()
    monitor = monitor or NullMonitor()
    base = launch_columns(job, None, backend.language, backend.device_key, backend.sm_count)
    static = static_provenance(backend)
    before = monitor.clocks()
    rows: list[dict] = []
    try:
        with LaunchSession(backend, job, prepared=prepared, seed=seed,
                           prep_dir=prep_dir) as session:
            base.update(session.resources)
            psat = resident_blocks(backend, config, session.resources)
            if choose is None:
                for sample in _sample_rows(session, config, psat, policy,
                                           states or backend.l2_states):
                    rows.append({**base, **sample, "status": "ok", "error": ""})
            else:
                rungs = ladder(config, psat, backend.sm_count) + [_full_rung(config, psat)]

                def timed(i: int, state: str) -> float:
                    rows.append({**base, **time_rung(session, config, rungs[i], state, policy),
                                 "status": "ok", "error": ""})
                    return float(rows[-1]["time_median_s"])

                choose(rungs, timed)
    except Failure as exc:
        rows = [failure_row({**base, "k": 0, "psat": 0, "blocks_requested": 0,
                             "blocks_launched": 0, "grid_fraction": 0.0, "sample_grid_x": 0,
                             "sample_grid_y": 0, "sample_grid_z": 0, "l2_state": ""},
                            exc.status, exc.error)]
    except LaunchError as exc:
        rows.append(failure_row({**base, "k": -1, "psat": 0, "blocks_requested": 0,
                                 "blocks_launched": 0, "grid_fraction": 0.0, "sample_grid_x": 0,
                                 "sample_grid_y": 0, "sample_grid_z": 0, "l2_state": ""},
                                "launch_failed", str(exc)))
    prov = row_provenance(static, before, monitor.clocks(), seed)
    for row in rows:
        row.update(prov)
    return rows


def measure_paid(backend: Backend, kernel: Any, config: Any = None,
                 **options: Any) -> list[dict]:
    """The ladder of samples timed ``paid`` only (``samples`` rows; a failure is one row,
    with ``l2_state`` paid). ``options`` are those of :func:`measure_samples`.

    Raises
    ------
    InputError
        When the backend cannot time the write-back of a launch (no ``paid`` state).
    """
    if "paid" not in backend.l2_states:
        raise InputError(f"the {backend.name} backend cannot time the write-back of a launch's "
                         "stores (paid samples need a CUDA backend: cupy or driver)")
    rows = measure_samples(backend, kernel, config, states=("paid",), **options)
    for row in rows:
        if row["status"] != "ok":
            row["l2_state"] = "paid"
    return rows


def _time_full_grid(rungs: list[dict], time: Callable[[int, str], float]) -> None:
    time(len(rungs) - 1, "cold")


def full_grid_columns(config: Any) -> dict:
    """The sample columns of a whole-grid row, also on its failure rows (which the
    campaign then knows as this experiment's, not the ladder's)."""
    gx, gy, gz = (list(config.grid) + [1, 1, 1])[:3]
    return {"k": 0, "blocks_requested": config.blocks, "blocks_launched": config.blocks,
            "grid_fraction": 1.0, "sample_grid_x": gx, "sample_grid_y": gy, "sample_grid_z": gz,
            "l2_state": "cold"}


def measure_full(backend: Backend, kernel: Any, config: Any = None,
                 **options: Any) -> list[dict]:
    """The whole grid timed as a cold sample: one ``samples`` row with ``k`` 0 (a failure
    is one row too). ``options`` are those of :func:`measure_samples`."""
    job = as_job(kernel, config, backend.language)
    rows = measure_samples(backend, job, choose=_time_full_grid, **options)
    for row in rows:
        if row["status"] != "ok":
            row.update(full_grid_columns(job.launch))
    return rows

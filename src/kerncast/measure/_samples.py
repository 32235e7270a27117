"""Sampled runs for the sampling model: the first k·Psat·N_SM blocks of a launch.

Psat is the number of blocks resident on one SM (:func:`kerncast.devices.occupancy`
with the kernel's real registers and shared memory) and N_SM the SMs in use, so a
sample of multiplier k runs k full waves of blocks. The multipliers are 1, 2, 3, 4,
5, then doubling (10, 20, 40, ...) until a sample covers at least 5% of the full
launch's blocks or takes 200 µs (on a 132-SM GPU a few waves take 5-20 µs, too close
to the launch floor to extrapolate from). On a CPU device (PoCL), whose launch floor is
50-100 µs, the time bound is also at least 20 times the first sample. Multi-dimensional
grids are cut into whole rows of blocks: ``grid_y' = ceil(K / grid_x)`` with the same
``grid_x`` (and whole x-y planes for 3-D grids), and where a row holds more than K blocks
and the sample runs with block offsets, into the first K blocks of the first row (a
whole row would make the first rungs one sample of several waves: copy_strided's
5,242,880 x 2 grid had one rung, half the grid). On the CUDA and OpenCL backends a sample
runs the kernel with block offsets (:func:`kerncast.frontend.offset_kernel`): its blocks
read the whole grid's size, so a grid-stride loop does the share of the work it does in
the whole launch, where a smaller grid would hand each block more of it. The sample of
the ladder's second rung (the first where the ladder has one rung) is also run from the
middle of the grid (``first_block`` > 0, :func:`middle_rung`), so that a sampler can see
whether the blocks there do the work of the first ones. Every sample is timed with each L2 state
the backend has: ``warm`` (repeated launches), ``cold`` (a kernel writing twice the L2's
size runs before each launch, outside the timed interval, with the busy-wait kernel
between) and, on the CUDA backends, ``paid`` (a flush that only reads before the launch,
and the write-back of the launch's own stores timed with it: what its stores cost the
full run, which writes back as it goes, where a ``cold`` sample also pays for the
flush's dirty lines).

:func:`measure_paid` times the ladder ``paid`` only, for datasets whose samples were
recorded before that state existed (the ``samples-paid`` experiment).

:func:`measure_full` times the whole grid (rows with ``k`` 0 and ``grid_fraction`` 1)
warm, as the ``times`` experiment times a launch: the direct measurement that a sampler
falls back on where its samples cannot be trusted, or where the grid is too short to
sample, so that a dataset can replay what live mode does. Nothing is extrapolated from
it, so the L2 is left as repeated launches leave it; a cold run of a launch whose data
fits in the L2 pays for the flush's dirty lines (10-68% on launches of 3-17 µs on the
H200). It is also timed cold, as a sample is: a second run of the ground truth in
the state the samples are in.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterator
from typing import Any

from kerncast._errors import InputError
from kerncast.core import Launch
from kerncast.measure._backend import Backend, CompileError, LaunchError, offset_slice
from kerncast.measure._job import as_job
from kerncast.measure._prep import Prepared
from kerncast.measure._provenance import NullMonitor, row_provenance, static_provenance
from kerncast.measure._run import failure_row, launch_columns
from kerncast.measure._session import Failure, LaunchSession
from kerncast.measure._timing import TimingPolicy, time_repeatedly
from kerncast.devices import occupancy
from kerncast.frontend import offset_kernel

#: The L2 states :func:`measure_full` times the whole grid in; ``warm`` first, as the
#: ``times`` experiment times it.
_FULL_GRID_STATES = ("warm", "cold")

__all__ = ["SAMPLE_MAX_FRACTION", "SAMPLE_MAX_SECONDS", "full_grid_columns", "measure_full",
           "measure_paid", "measure_samples", "middle_rung", "multipliers", "resident_blocks",
           "sampled_grid"]

SAMPLE_MAX_FRACTION = 0.05
SAMPLE_MAX_SECONDS = 200e-6
#: on CPU devices a sample must also take this many times the first one
CPU_FLOOR_MULTIPLE = 20


def multipliers() -> Iterator[int]:
    """1, 2, 3, 4, 5, 10, 20, 40, ..."""
    return itertools.chain(range(1, 6), (5 * 2 ** i for i in itertools.count(1)))


def sampled_grid(grid: tuple[int, ...], blocks: int,
                 partial: bool = False) -> tuple[int, int, int]:
    """The grid of the first ``blocks`` blocks, cut into whole rows (or planes); with
    ``partial``, fewer blocks than a row are the first ``blocks`` of the first row (a
    kernel with block offsets reads the whole grid's size, so a sample may cut a row)."""
    gx, gy, gz = (list(grid) + [1, 1, 1])[:3]
    blocks = max(1, int(blocks))
    if blocks >= gx * gy * gz:
        return gx, gy, gz
    if (gy == 1 and gz == 1) or (partial and blocks < gx):
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


def ladder(config: Launch, psat: int, sm_count: int, partial: bool = False) -> list[dict]:
    """Every sample a launch has: one per multiplier whose grid (cut into whole rows or
    planes, or with ``partial`` part of the first row, :func:`sampled_grid`) differs from
    the previous one and stays short of the full grid."""
    rungs, previous = [], None
    for k in multipliers():
        wanted = k * psat * sm_count
        grid = sampled_grid(config.grid, wanted, partial)
        launched = math.prod(grid)
        if launched >= config.blocks:
            return rungs
        if grid != previous:
            rungs.append({"k": k, "psat": psat, "blocks_requested": wanted,
                          "blocks_launched": launched, "grid_fraction": launched / config.blocks,
                          "sample_grid_x": grid[0], "sample_grid_y": grid[1],
                          "sample_grid_z": grid[2], "first_block": 0})
        previous = grid


def middle_rung(config: Launch, rung: dict) -> dict | None:
    """``rung``'s sample moved to the middle of the grid: its first block halfway along the
    dimension it cuts (or as far as the sample still fits), or None where it cuts none."""
    grid = config.grid
    sample = [rung["sample_grid_x"], rung["sample_grid_y"], rung["sample_grid_z"]]
    for axis in (2, 1, 0):
        if sample[axis] < grid[axis]:
            first = [0, 0, 0]
            first[axis] = min(grid[axis] // 2, grid[axis] - sample[axis])
            return {**rung, "first_block": first[0] + grid[0] * (first[1] + grid[1] * first[2])}
    return None


def _first(config: Launch, first_block: int) -> tuple[int, int, int]:
    """The block index (x, y, z) of the linear block number ``first_block``."""
    gx, gy, _ = config.grid
    return first_block % gx, first_block // gx % gy, first_block // (gx * gy)


def _full_rung(config: Launch, psat: int) -> dict:
    rung = {**full_grid_columns(config), "psat": psat}
    del rung["l2_state"]
    return rung


class _Offsets:
    """The kernel built with block offsets for a session's backend (CUDA or OpenCL), and
    the launch of one sample through it (:meth:`of` gives None where there are none)."""

    def __init__(self, session: LaunchSession):
        self.session, backend = session, session.backend
        self.cuda = backend.language == "cuda"
        kernel = offset_kernel(session.job.kernel, session.launch, backend.language,
                               backend.device_key or "h100")
        try:
            self.compiled = backend.compile(kernel)
        except CompileError as exc:
            raise Failure("compile_failed", f"the kernel with block offsets: {exc}") from None

    @classmethod
    def of(cls, session: LaunchSession) -> _Offsets | None:
        """The offsets of ``session``, or None where its backend or kernel cannot take
        them (a backend without ``block_offsets``, a device function that reads the block
        index): its samples then run on a smaller grid, as before offsets."""
        backend = session.backend
        if not backend.block_offsets or backend.language not in ("cuda", "opencl"):
            return None
        if backend.language == "opencl" and session.job.kernel.language != "opencl":
            return None
        try:
            return cls(session)
        except InputError:
            return None

    def launch(self, grid: tuple[int, int, int], first_block: int) -> Launch:
        """The sample's launch (:func:`offset_slice`)."""
        session = self.session
        return offset_slice(session.backend, session.dev, session.launch,
                            _first(session.launch, first_block), grid)

    def done(self) -> None:
        if not self.cuda:
            self.session.backend.global_offset = None


def time_rung(session: LaunchSession, config: Launch, rung: dict, state: str,
              policy: TimingPolicy, offsets: _Offsets | None = None) -> dict:
    """One sample timed with a ``warm``, ``cold`` or ``paid`` L2: the rung's columns and
    timing. A sample of part of the grid runs through ``offsets`` where there are any."""
    backend = session.backend
    grid = (rung["sample_grid_x"], rung["sample_grid_y"], rung["sample_grid_z"])
    compiled, sample = session.compiled, dataclasses.replace(session.launch, grid=grid)
    part = offsets is not None and rung["grid_fraction"] < 1
    if part:
        compiled, sample = offsets.compiled, offsets.launch(grid, int(rung.get("first_block", 0)))
    elif rung.get("first_block", 0):
        raise InputError("a sample away from the grid's start needs block offsets: a CUDA or "
                         "OpenCL backend")
    timer = backend.time_paid if state == "paid" else backend.time_launch

    def before() -> None:
        session.restore()
        if state != "warm":
            backend.flush_l2(writes=state == "cold")

    try:
        stats = time_repeatedly(lambda i: timer(compiled, sample, session.dev, before), policy)
    finally:
        if part:
            offsets.done()
    return {**rung, "l2_state": state, **stats.columns()}


def _sample_rows(session: LaunchSession, config: Launch, psat: int,
                 policy: TimingPolicy, states: tuple[str, ...],
                 offsets: _Offsets | None = None) -> Iterator[dict]:
    """The ladder's samples timed in each of ``states``, up to the rung where the first
    state's time (or the share of the grid) says the samples are long enough; then,
    with ``offsets``, the second rung (or the only one) from the middle of the grid."""
    backend, bound = session.backend, SAMPLE_MAX_SECONDS
    rungs = ladder(config, psat, backend.sm_count, partial=offsets is not None)
    for rung in rungs:
        timed = [time_rung(session, config, rung, state, policy, offsets) for state in states]
        first = timed[0]["time_median_s"]
        if rung["k"] == 1 and _on_cpu(backend):
            bound = max(SAMPLE_MAX_SECONDS, CPU_FLOOR_MULTIPLE * first)
        yield from timed
        if rung["k"] >= 5 and (rung["grid_fraction"] >= SAMPLE_MAX_FRACTION or first >= bound):
            break
    middle = None if offsets is None or not rungs else middle_rung(config, rungs[min(1, len(rungs) - 1)])
    if middle is not None:
        yield from (time_rung(session, config, middle, state, policy, offsets) for state in states)


def measure_samples(backend: Backend, kernel: Any, config: Any = None, *,
                    prepared: Prepared | None = None, policy: TimingPolicy | None = None,
                    seed: int = 0, monitor: Any = None, prep_dir: str | None = None,
                    choose: Callable[[list[dict], Callable[[int, str], dict]], Any] | None = None,
                    states: tuple[str, ...] | None = None) -> list[dict]:
    """Sampled runs of one launch configuration: ``samples`` rows (a failure is one row).

    Without ``choose`` every sample of the ladder runs in each of ``states`` (by default
    every L2 state the backend has), then the middle one. With it, only
    those it asks for: ``choose(rungs, time)`` gets the ladder (a dict per sample), the
    full grid (``k`` 0), then, on a backend with block offsets, each sample of the ladder
    moved to the middle of the grid (``first_block`` > 0), and ``time(i, l2_state)``, which
    runs rung ``i`` and returns its row (``time_median_s`` and the 95% interval of that
    median, ``time_ci_low_s`` and ``time_ci_high_s``); what ``choose`` returns is dropped. ``kernel`` is a
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
            offsets = _Offsets.of(session)
            if choose is None:
                for sample in _sample_rows(session, config, psat, policy,
                                           states or backend.l2_states, offsets):
                    rows.append({**base, **sample, "status": "ok", "error": ""})
            else:
                rungs = ladder(config, psat, backend.sm_count, partial=offsets is not None)
                middle = [] if offsets is None else [
                    m for m in (middle_rung(config, r) for r in rungs) if m is not None]
                rungs = rungs + [_full_rung(config, psat)] + middle

                def timed(i: int, state: str) -> dict:
                    rows.append({**base, **time_rung(session, config, rungs[i], state, policy,
                                                     offsets),
                                 "status": "ok", "error": ""})
                    return rows[-1]

                choose(rungs, timed)
    except Failure as exc:
        rows = [failure_row({**base, "k": 0, "psat": 0, "blocks_requested": 0,
                             "blocks_launched": 0, "grid_fraction": 0.0, "sample_grid_x": 0,
                             "sample_grid_y": 0, "sample_grid_z": 0, "first_block": 0,
                             "l2_state": ""},
                            exc.status, exc.error)]
    except LaunchError as exc:
        rows.append(failure_row({**base, "k": -1, "psat": 0, "blocks_requested": 0,
                                 "blocks_launched": 0, "grid_fraction": 0.0, "sample_grid_x": 0,
                                 "sample_grid_y": 0, "sample_grid_z": 0, "first_block": 0,
                                 "l2_state": ""},
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


def _time_full_grid(rungs: list[dict], time: Callable[[int, str], Any]) -> None:
    whole = next(i for i, r in enumerate(rungs) if r["k"] == 0)
    for state in _FULL_GRID_STATES:
        time(whole, state)


def full_grid_columns(config: Any) -> dict:
    """The sample columns of a whole-grid row, also on its failure rows (which the
    campaign then knows as this experiment's, not the ladder's)."""
    gx, gy, gz = (list(config.grid) + [1, 1, 1])[:3]
    return {"k": 0, "blocks_requested": config.blocks, "blocks_launched": config.blocks,
            "grid_fraction": 1.0, "sample_grid_x": gx, "sample_grid_y": gy, "sample_grid_z": gz,
            "first_block": 0, "l2_state": _FULL_GRID_STATES[0]}


def measure_full(backend: Backend, kernel: Any, config: Any = None,
                 **options: Any) -> list[dict]:
    """The whole grid timed warm and cold: two ``samples`` rows with ``k`` 0 (a failure
    is one row). ``options`` are those of :func:`measure_samples`."""
    job = as_job(kernel, config, backend.language)
    rows = measure_samples(backend, job, choose=_time_full_grid, **options)
    for row in rows:
        if row["status"] != "ok":
            row.update(full_grid_columns(job.launch))
    return rows

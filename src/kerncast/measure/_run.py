"""Measure one launch configuration as a performance engineer would, and say what happened.

:func:`measure_config` is the harness around :func:`time_repeatedly` that every
backend's ``times`` rows come from:

1. compile (a compiler error is a ``compile_failed`` row) and read the function's
   registers and shared memory; refuse launches the device cannot run;
2. refuse, before allocating anything, sizes whose buffers do not fit in device
   memory (``too_large``);
3. upload the inputs (outputs poisoned), in several copies cycled between launches
   when all buffers fit in twice the L2 cache, and keep a pristine device copy of
   every ``inout`` buffer, restored before every launch outside the timed interval;
4. time with warm-up and the stopping rule, reading the clocks before and after;
5. compare every copy's outputs with the NumPy reference: an output never written
   or outside the spec's tolerance makes a ``wrong_output`` row whose ``error``
   names the first mismatch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kerncast._errors import InputError
from kerncast.core import cycled_copies
from kerncast.corpus import CorpusKernel, compare_outputs
from kerncast.corpus import poison
from kerncast.measure._backend import Backend, CompileError, Compiled, DeviceMemoryError, LaunchError
from kerncast.measure._job import Job, as_job
from kerncast.measure._prep import Prepared
from kerncast.measure._provenance import NullMonitor, row_provenance, static_provenance
from kerncast.measure._timing import TimingPolicy, time_repeatedly
from kerncast.devices import occupancy

__all__ = ["TooLarge", "buffer_bytes", "check_launchable", "failure_row", "launch_columns",
           "measure_config", "output_problems", "plan_input_sets"]

GiB = float(1 << 30)
MEMORY_MARGIN = 0.9  # use at most this fraction of the free device memory


class TooLarge(Exception):
    """The buffers do not fit in device memory."""


def _xyz(dims: tuple[int, ...]) -> tuple[int, int, int]:
    return tuple((list(dims) + [1, 1, 1])[:3])  # type: ignore[return-value]


def launch_columns(kernel: Any, config: Any, language: str, device: str,
                   sm_count: int) -> dict[str, Any]:
    """Key and launch-geometry columns of a row, for a :class:`Job` (``config`` None) or a
    corpus kernel at ``config``."""
    job = as_job(kernel, config, language)
    launch = job.launch
    gx, gy, gz = launch.grid
    bx, by, bz = launch.block
    return {
        "kernel": job.name, "language": language, "size": job.columns["size"],
        "config": job.columns["config"], "device": device, "sm_count": int(sm_count),
        "grid_x": gx, "grid_y": gy, "grid_z": gz, "block_x": bx, "block_y": by, "block_z": bz,
        "blocks": launch.blocks, "threads_per_block": launch.threads_per_block,
        "dynamic_shared": launch.dynamic_shared,
        "tunables": job.columns["tunables"], "params": job.columns["params"],
    }


def _unwritten(name: str, actual: np.ndarray, expected: np.ndarray) -> str | None:
    if actual.shape != expected.shape:
        return None
    marker = poison(actual.dtype, 1)[0]
    if actual.dtype.kind == "f":
        mask = np.isnan(actual)
        if expected.dtype.kind == "f":
            mask &= ~np.isnan(expected)
    else:
        mask = (actual == marker) & (expected != marker)
    count = int(mask.sum())
    if not count:
        return None
    first = int(np.flatnonzero(mask)[0])
    return (f"{name}: {count} of {mask.size} elements never written (still poisoned), "
            f"first at [{first}]")


def output_problems(kernel: CorpusKernel, got: dict, want: dict) -> list[str]:
    """Unwritten (still poisoned) outputs first, then values outside the tolerance."""
    intents = {a.name: a.intent for a in kernel.spec.args}
    problems = []
    for name, expected in want.items():
        if intents.get(name) == "out":
            actual = np.asarray(got[name]).reshape(-1)
            found = _unwritten(name, actual, np.asarray(expected).reshape(-1))
            if found:
                problems.append(found)
    return problems + compare_outputs(kernel, got, want)


def buffer_bytes(kernel: Any, config: Any = None) -> dict[str, tuple[int, str]]:
    """Bytes and intent of every buffer of a launch, planned (nothing generated)."""
    job = as_job(kernel, config)
    return {n: (job.buffer_sizes[n], job.intents[n]) for n in job.buffer_sizes}


def plan_input_sets(backend: Backend, kernel: Any, config: Any, policy: TimingPolicy,
                    rotate: bool = True) -> int:
    """How many copies of the buffers to cycle; raise :class:`TooLarge` if one does not fit."""
    job = as_job(kernel, config, backend.language)
    sizes = buffer_bytes(job)
    one = sum(b for b, _ in sizes.values())
    inout = sum(b for b, intent in sizes.values() if intent == "inout")
    flush = 2 * backend.l2_bytes if backend.kind == "gpu" else 0
    free, total = backend.memory_info()
    budget = MEMORY_MARGIN * free - inout - flush
    where = job.where
    if one > budget:
        extra = " and its L2 flush buffer" if flush else ""
        raise TooLarge(
            f"{where} needs {one / GiB:.2f} GiB of device memory for its buffers "
            f"(+{(inout + flush) / GiB:.2f} GiB for pristine inout copies{extra}), but "
            f"{free / GiB:.2f} GiB of {total / GiB:.1f} GiB are free on {backend.device_key}; "
            "measure a smaller size")
    limit = getattr(backend, "max_buffer_bytes", None)
    largest = max((b for b, _ in sizes.values()), default=0)
    if limit and largest > limit:
        raise TooLarge(f"{where} has a buffer of {largest / GiB:.2f} GiB, but "
                       f"{backend.device_key} allocates at most {limit / GiB:.2f} GiB in one "
                       "buffer; measure a smaller size")
    if not (rotate and policy.rotate_inputs and backend.l2_bytes):
        return 1
    fits = int(budget // max(one, 1))
    return max(1, min(cycled_copies(one, backend.l2_bytes, policy.max_input_sets), fits))


def failure_row(row: dict, status: str, error: str) -> dict:
    """Fill a row's outcome columns for a failure."""
    row.update(status=status, error=error.strip()[:2000], repetitions=0, converged=False,
               warmup=0)
    return row


def check_launchable(backend: Backend, config: Any, compiled: Compiled) -> str | None:
    if backend.kind != "gpu" or backend.device_key.startswith("cpu:"):
        return None

    res = compiled.resources
    if res.max_threads_per_block is not None and config.threads_per_block > res.max_threads_per_block:
        return (f"{config.threads_per_block} threads per block exceed the compiled function's "
                f"limit of {res.max_threads_per_block} (registers {res.registers})")
    try:
        occ = occupancy(backend.device_key, config.threads_per_block, res.registers or 0,
                        (res.static_shared or 0) + config.dynamic_shared)
    except InputError as exc:
        return str(exc)
    if occ.blocks_per_sm == 0:
        return f"no block of this launch fits on an SM ({occ.limiting} limit)"
    return None


def _upload_sets(backend, job: Job, prepared, sets_count) -> tuple[list, dict]:
    """Device argument sets and pristine inout copies; inputs that several
    configurations share stay on the device between them (backends with a cache)."""
    from kerncast.measure._session import upload_args  # noqa: PLC0415 (cycle)

    inout = job.buffers("inout")
    if sets_count == 1 and prepared.key is not None and hasattr(backend, "cached_upload"):
        fixed_names = job.buffers("in")
        fixed = backend.cached_upload(prepared.key[:5], {n: prepared.args[n] for n in fixed_names})
        pristine = backend.cached_upload(prepared.key[:5] + ("pristine",),
                                         {n: prepared.args[n] for n in inout})
        outs = job.buffers("out")
        rest = {k: v for k, v in prepared.args.items() if k not in fixed and k not in outs}
        dev = {**upload_args(backend, rest), **fixed}
        if hasattr(backend, "duplicate"):  # poisoned outputs: device copies of a template
            shapes = tuple((n, prepared.args[n].size) for n in outs)  # outputs may vary by config
            templates = backend.cached_upload(prepared.key[:5] + ("poison", shapes),
                                              {n: prepared.args[n] for n in outs})
            dev.update({n: backend.duplicate(t) for n, t in templates.items()})
        else:
            dev.update(backend.upload({n: prepared.args[n] for n in outs}))
        return [dev], pristine
    pristine = backend.upload({n: prepared.args[n] for n in inout})
    return [upload_args(backend, prepared.args) for _ in range(sets_count)], pristine


def _check(backend, job: Job, prepared, sets, used) -> list[list[str]]:
    """Output problems of every set used (compared on the device when the backend can)."""
    if hasattr(backend, "output_problems") and prepared.key is not None and job.corpus:
        return [backend.output_problems(job.corpus[0], sets[i], prepared.want, prepared.key)
                for i in sorted(used)]
    templates = {name: prepared.args[name] for name in prepared.want}
    return [job.problems(backend.download(sets[i], templates), prepared.want)
            for i in sorted(used)]


def _time(backend, compiled, job: Job, prepared, sets_count, policy):
    """Upload, time and check; returns (stats, problems of every set used)."""
    inout = job.buffers("inout")
    sets, pristine = [], {}
    try:
        sets, pristine = _upload_sets(backend, job, prepared, sets_count)

        used: set[int] = set()

        def before(i: int) -> None:
            for name in inout:
                backend.copy(sets[i % len(sets)][name], pristine[name])

        def launch_once(i: int) -> float:
            used.add(i % len(sets))
            return backend.time_launch(compiled, job.launch, sets[i % len(sets)],
                                       before=(lambda: before(i)) if inout else None)

        stats = time_repeatedly(launch_once, policy)
        backend.synchronize()
        return stats, (_check(backend, job, prepared, sets, used) if policy.check else [])
    finally:
        for dev in [*sets, pristine]:
            backend.free(dev)


def measure_config(backend: Backend, kernel: Any, config: Any = None, *,
                   prepared: Prepared | None = None, policy: TimingPolicy | None = None,
                   seed: int = 0, monitor: Any = None, experiment: str = "times",
                   sm_count_requested: int | None = None, prep_dir: str | None = None) -> dict:
    """Measure one launch, a :class:`Job` (or a corpus kernel at ``config``); return its
    ``times`` row (never raises for a kernel's failure: compile errors, launch errors,
    wrong outputs, sizes that do not fit all become rows with their status)."""
    job = as_job(kernel, config, backend.language)
    policy = policy or TimingPolicy()
    monitor = monitor or NullMonitor()
    row = launch_columns(job, None, backend.language, backend.device_key, backend.sm_count)
    row.update(experiment=experiment, input_sets=0,
               sm_count_requested=int(sm_count_requested or backend.sm_count))
    before = monitor.clocks()
    static = static_provenance(backend)

    def done(status: str, error: str = "") -> dict:
        if status != "ok":
            failure_row(row, status, error)
        else:
            row.update(status="ok", error="")
        row.update(row_provenance(static, before, monitor.clocks(), seed))
        return row

    try:
        compiled = backend.compile(job.kernel)
    except CompileError as exc:
        return done("compile_failed", str(exc))
    row.update(compiled.resources.columns())
    problem = check_launchable(backend, job.launch, compiled)
    if problem:
        return done("invalid_config", problem)
    try:
        sets = plan_input_sets(backend, job, None, policy)
    except TooLarge as exc:
        return done("too_large", str(exc))
    row["input_sets"] = sets
    prepared = prepared or job.prepare(seed, prep_dir)
    try:
        stats, checked = _time(backend, compiled, job, prepared, sets, policy)
    except DeviceMemoryError as exc:
        return done("out_of_memory", str(exc))
    except LaunchError as exc:
        return done("launch_failed", str(exc))
    row.update(stats.columns())
    for index, problems in enumerate(checked):
        if problems:
            where = f" (input copy {index})" if len(checked) > 1 else ""
            done("wrong_output", "; ".join(problems) + where)
            row.update(stats.columns())
            return row
    return done("ok")

"""Measurement campaigns: the corpus measured into a dataset, robustly and resumably.

A campaign plans items (:mod:`kerncast.measure._plan`), skips those already recorded
in the output directory, and works through the rest one (kernel, size) at a time:

* inputs and NumPy references are prepared ahead in a process pool on the CPU
  cores (``--workers``), unit by unit, in a scratch directory outside the dataset
  (CUDA cubins are compiled ahead too);
* GPU work is strictly sequential, in one measuring child process
  (:mod:`kerncast.measure._supervise`) that stays up from item to item; a crash, a
  hang (item timeout), a compile or launch failure, an allocation failure or a wrong
  output becomes a failure row and the campaign goes on (in a new child where the old
  one died or its CUDA context may be broken);
* counters come from Nsight Compute batches (:class:`NcuObserver`) after the other
  experiments;
* rows are committed as immutable part files (temporary name + rename) after each
  item's rows are complete, so a kill loses at most the items in flight;
* ``deadline_s`` stops starting new work in time to write everything before an
  external limit; the next run resumes where this one stopped; a finished campaign
  compacts its parts into the table files.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from kerncast._errors import InputError, ToolchainError
from kerncast.corpus import SIZE_NAMES, get_kernel, list_kernels
from kerncast.measure._api import monitor_of
from kerncast.measure._factory import backend_language
from kerncast.measure._registry import BACKEND_KINDS, backend_kind
from kerncast.measure._plan import (
    DEFAULT_SM_COUNTS,
    PROFILED,
    Item,
    Unit,
    done_keys,
    item_key,
    plan_units,
)
from kerncast.measure._provenance import host_cpu_key, row_provenance
from kerncast.measure._run import failure_row, launch_columns
from kerncast.measure._supervise import run_worker
from kerncast.measure._timing import TimingPolicy
from kerncast.measure._prep import prepare_unit
from kerncast.measure._cuda_common import nvrtc_options, resolve_device_key
from kerncast.measure._nvrtc import cubin_file
from kerncast.devices import get_device
from kerncast.execute import CORES_VARIABLE, slice_cores
from kerncast.measure._provenance import ncu_path, python_tool_versions, utc_now
from kerncast.measure._nvml import try_nvml
from kerncast.data import Dataset, compact, write_part
from kerncast.measure._cpu import c_provenance
import kerncast
from kerncast.measure._samples import full_grid_columns
from kerncast.measure._counters import run_counters
from kerncast.data.schema import _is_metric, columns

__all__ = ["Campaign", "CampaignResult"]

FAILURE_EXTRAS = {
    "times": {"experiment": "times", "input_sets": 0},
    "samples": {"k": 0, "psat": 0, "blocks_requested": 0, "blocks_launched": 0,
                "grid_fraction": 0.0, "sample_grid_x": 0, "sample_grid_y": 0, "sample_grid_z": 0,
                "l2_state": ""},
    "energy": {"launches": 0, "power_samples": 0},
    "counters": {"ncu_id": None, "ncu_kernel_name": "", "metrics_missing": "", "psat": None,
                 "blocks_launched": None},
    "cpu": {},
}


def scratch_dir() -> str | None:
    """Where prepared inputs wait for the GPU: ``$KERNCAST_SCRATCH``, else /dev/shm when
    it has room for several large units (memory is faster than disk and a lent GPU
    machine's disk is small), else the system's temporary directory."""
    chosen = os.environ.get("KERNCAST_SCRATCH")
    if chosen:
        return chosen
    shm = Path("/dev/shm")
    try:
        if shm.is_dir() and shutil.disk_usage(shm).free > 48 * (1 << 30):
            return str(shm)
    except OSError:
        pass
    return None


def crash_report(stderr: str, limit: int = 1200) -> str:
    """What a dead measuring process left on stderr, for its crash row: from the fatal
    error that the fault handler printed (the signal and the stack where it came), without
    the list of extension modules; otherwise the end of stderr."""
    at = stderr.find("Fatal Python error")
    if at < 0:
        return stderr[-800:]
    lines = [line for line in stderr[at:].splitlines()
             if not line.startswith("Extension modules:")]
    return "\n".join(lines)[:limit]


@dataclass
class CampaignResult:
    """What a campaign run did."""

    out: str
    planned: int
    measured: int
    remaining: int
    rows: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)
    stopped_by_deadline: bool = False
    interrupted: bool = False
    compacted: bool = False
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    # host wall time of the items the measuring children finished (backend set-up,
    # compiling, preparing, timing and checking), and how many they were
    item_wall_s: float = 0.0
    items_timed: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


def _prep_task(kernel: str, size: str, tunables: list[dict], root: str, seed: int,
               corpus_root: str | None, arch: str | None) -> str:
    """Prepare a unit's inputs and references and, for CUDA, compile its cubins ahead."""
    k = get_kernel(kernel, Path(corpus_root) if corpus_root else None)
    configs = [k.launch(size, t) for t in tunables]
    if arch and "cuda" in k.languages:
        sources = {}
        for config in configs:  # as the backends compile it: the instance's source and options
            source, _ = k.instance(config, "cuda")
            sources[(source.source, nvrtc_options(source))] = Path(source.display).name
        for (text, options), name in sources.items():
            try:
                cubin_file(text, options, arch, name)
            except Exception:  # noqa: BLE001 (the measuring worker reports compile errors)
                pass
    return str(prepare_unit(k, size, configs, root, seed))


class Campaign:
    """Measure corpus kernels into the dataset directory ``out``.

    Parameters
    ----------
    out
        The dataset directory (created; an existing one is resumed).
    device
        Device name (``h100``); ``cpu`` for the pocl backend.
    backend
        ``cupy`` (default), ``opencl``, ``pocl``, or ``module:attribute`` (tests).
    experiments
        Any of times, samples, samples-full, samples-paid, energy, sm-sweep, energy-sweep, counters,
        counters-sweep (Nsight Compute inside a green context at each SM count),
        sample-counters, cpu.
    kernels, sizes
        Kernel names (default: the whole corpus) and sizes (default: all).
    configs
        ``auto`` (all configurations for times/counters/samples, the default one for
        energy/sm-sweep), ``all``, ``default`` or ``spread`` (the default and the two
        configurations farthest apart in threads per block).
    deadline_s
        Seconds this run may take; no new work starts when too little is left.
    workers
        Processes preparing inputs ahead (default: up to 4 on GPUs, 0 on PoCL).
    log
        Append this run to ``campaign.json`` (a campaign over several GPUs logs once, for
        all its workers).
    gpus, executor, address
        GPU indices or UUIDs to measure on at once, one worker per GPU on the executor
        ``pool`` or ``ray`` (a Ray cluster's ``address``); see :mod:`kerncast.measure._gpus`.
    slices
        For a CPU backend (PoCL): measure with this many workers at once, each on its own
        equal slice of the machine's cores. Each slice is a device of its own, keyed
        ``cpu:<model>-<cores>-cores``: its rows never stand for the whole machine's.
    """

    def __init__(self, out: str | Path, *, device: str | None, backend: str = "cupy",
                 experiments: tuple[str, ...] | list[str] = ("times",),
                 kernels: list[str] | None = None, sizes: list[str] | None = None,
                 sm_counts: tuple[int, ...] = DEFAULT_SM_COUNTS, configs: str = "auto",
                 deadline_s: float | None = None, workers: int | None = None, seed: int = 0,
                 item_timeout_s: float = 120.0, retry_failed: bool = False,
                 corpus_root: str | Path | None = None, policy: TimingPolicy | None = None,
                 flush_rows: int = 50, flush_s: float = 30.0, ncu_batch: int = 24,
                 compact: bool = True, language: str | None = None, log: bool = True,
                 gpus: tuple[str, ...] | list[str] = (), executor: str = "pool",
                 address: str | None = None, slices: int = 0):
        self._options = {
            "out": str(out), "device": device, "backend": backend,
            "experiments": list(experiments), "sizes": sizes, "sm_counts": tuple(sm_counts),
            "configs": configs, "workers": workers, "seed": seed,
            "item_timeout_s": item_timeout_s, "retry_failed": retry_failed,
            "corpus_root": str(corpus_root) if corpus_root else None, "policy": policy,
            "flush_rows": flush_rows, "flush_s": flush_s, "ncu_batch": ncu_batch,
            "language": language}
        self.out = Path(out)
        self.log = log
        self.gpus, self.executor, self.address = tuple(gpus), executor, address
        self.slices = int(slices or 0)
        self.backend = backend
        self.experiments = list(dict.fromkeys(experiments))
        self.corpus_root = Path(corpus_root) if corpus_root else None
        self.kernel_names = kernels
        self.sizes = list(sizes or SIZE_NAMES)
        self.sm_counts, self.configs = tuple(sm_counts), configs
        self.deadline_s, self.seed = deadline_s, seed
        self.item_timeout_s, self.retry_failed = item_timeout_s, retry_failed
        self.policy = policy or TimingPolicy()
        self.flush_rows, self.flush_s, self.ncu_batch = flush_rows, flush_s, ncu_batch
        self.compact = compact
        # None for a backend named module:attr (tests plug in fakes so)
        self.kind = BACKEND_KINDS.get(backend) if ":" in backend else backend_kind(backend)
        self.language = language or backend_language(backend)
        on_cpu = self.kind is not None and self.kind.device == "cpu"
        self._check_slices(on_cpu)
        self.device_key, self.total_sms, self.device_arg = self._resolve_device(device)
        self.cpu_key = host_cpu_key()
        default_workers = 0 if on_cpu else min(4, max(0, (os.cpu_count() or 1) - 2))
        self.workers = default_workers if workers is None else max(0, workers)
        self._check_experiments()

    # -- set-up ---------------------------------------------------------------------------
    def _check_slices(self, on_cpu: bool) -> None:
        if self.slices < 0:
            raise InputError(f"--slices {self.slices}: give a number of workers, 2 or more")
        if self.slices <= 1:
            return
        if not on_cpu:
            raise InputError(f"--slices {self.slices} divides a CPU's cores between workers; "
                             f"the {self.backend} backend measures a GPU: use --gpus")
        slice_cores(self.slices)

    def _resolve_device(self, device: str | None) -> tuple[str, int, str | None]:
        if self.kind is not None and self.kind.device == "cpu":
            if device not in (None, "cpu", "host") and not str(device).startswith("cpu:"):
                raise InputError(f"the {self.backend} backend measures this machine's CPU, "
                                 f"not {device!r}; pass --device cpu")
            # a campaign over slices, or one slice's own (in a slice's worker)
            cores = slice_cores(self.slices) if self.slices > 1 else \
                int(os.environ.get(CORES_VARIABLE) or 0)
            return host_cpu_key(cores or None), cores or os.cpu_count() or 1, None
        if device is None:
            raise InputError("--device is required (the GPU's name, e.g. h100)")

        if self.kind is None and str(device).startswith("cpu:"):
            return str(device), 1, device
        spec = get_device(device)
        return spec.key, spec.compute.sm_count, device

    def _check_experiments(self) -> None:
        if self.kind is None:
            return
        if self.kind.device == "recorded":
            raise InputError(f"a campaign measures; --backend {self.backend} only serves "
                             "recorded rows")
        bad = [e for e in self.experiments if not self.kind.can_run(e)]
        if bad:
            raise InputError(f"the {self.backend} backend cannot run {', '.join(bad)} "
                             f"(it runs {', '.join(sorted(self.kind.experiments or ()))}); use "
                             "--backend cupy on an NVIDIA GPU")

    def check_tools(self) -> None:
        if any(e in PROFILED for e in self.experiments):
            if ncu_path() is None:
                raise ToolchainError("the counters experiment needs Nsight Compute (ncu); "
                                     "install the CUDA toolkit or drop counters")
        if {"energy", "energy-sweep"} & set(self.experiments) and self.kind is not None:
            if try_nvml() is None:
                raise ToolchainError("the energy experiment needs NVML (pip install "
                                     "nvidia-ml-py) and an NVIDIA driver")

    def check_device(self) -> None:
        """Refuse at once, before any item, a GPU that is not the one asked for (NVML's
        name for the first GPU this process sees; skipped where NVML is missing)."""
        if self.kind is None or self.kind.monitor != "nvml" or self.device_arg is None:
            return

        nvml = try_nvml()
        if nvml is not None:
            resolve_device_key(nvml.name(), self.device_arg)

    def kernels(self):
        if self.kernel_names:
            return [get_kernel(name, self.corpus_root) for name in self.kernel_names]
        return list_kernels(self.corpus_root)

    def plan(self) -> tuple[list[Unit], list[str]]:
        """Every unit and item of this campaign (before resuming), and notes."""
        return plan_units(self.kernels(), self.sizes, self.experiments, language=self.language,
                          configs=self.configs, sm_counts=self.sm_counts, total_sms=self.total_sms)

    def _device_of(self, item: Item) -> str:
        return self.cpu_key if item.experiment == "cpu" else self.device_key

    def pending(self) -> tuple[list[Unit], list[str], int]:
        """Units with only the items not yet recorded; notes; items planned in all."""
        units, notes = self.plan()
        planned = sum(len(u.items) for u in units)
        if not self.out.exists():
            return units, notes, planned

        try:
            existing = Dataset.read(self.out)
        except InputError as exc:
            if "is not a kerncast dataset" in str(exc):
                return units, notes, planned
            raise
        done = done_keys(existing, self.total_sms, ok_only=self.retry_failed)
        for unit in units:
            unit.items = [i for i in unit.items if item_key(i, self._device_of(i)) not in done]
        return [u for u in units if u.items], notes, planned

    # -- running --------------------------------------------------------------------------
    def run(self, progress: Callable[[int, int, str], None] | None = None) -> CampaignResult:
        """Measure what is not recorded yet; ``progress(done, total, what)`` reports."""
        if self.gpus or self.slices > 1:
            from kerncast.measure._gpus import run_on_gpus  # noqa: PLC0415 (cycle: _gpus builds Campaigns)

            return run_on_gpus(self, self.gpus, self.executor, self.address, progress,
                               slices=self.slices)
        self.check_tools()
        self.check_device()
        units, notes, planned = self.pending()
        self.begin(sum(len(u.items) for u in units), progress)
        self._items = {i.id: i for u in units for i in u.items}
        self.log_session("started", planned=planned, pending=self._total)
        prep_root = Path(tempfile.mkdtemp(prefix="kerncast-prep-", dir=scratch_dir()))
        pool = self._pool()
        interrupted = False
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            self._run_units(units, pool, prep_root)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            signal.signal(signal.SIGTERM, previous)
            self._flush(force=True)
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
            shutil.rmtree(prep_root, ignore_errors=True)
        notes = notes + self._prep_failures()
        remaining = self._total - self._done
        result = CampaignResult(
            str(self.out), planned, self._done, remaining, dict(self._rows), dict(self._statuses),
            self._deadline_hit, interrupted, False, time.monotonic() - self._t0, notes,
            sum(self._seconds.values()), len(self._seconds))
        if remaining == 0 and self.compact and not interrupted:
            compact(self.out)
            result.compacted = True
        self.log_session("ended", result=result.to_dict())
        return result

    def begin(self, total: int, progress: Callable[[int, int, str], None] | None = None
              ) -> None:
        """Start counting a run of ``total`` items (rows are accepted from here on)."""
        self._t0 = time.monotonic()
        self._stop_new, self._hard = self._deadlines()
        self._progress = progress or (lambda done, total, what: None)
        self._total, self._done = total, 0
        self._pending_rows: dict[str, list[dict]] = {}
        self._last_flush = time.monotonic()
        self._rows: Counter[str] = Counter()
        self._statuses: Counter[str] = Counter()
        self._describe: dict[str, Any] = {}
        self._seconds: dict[int, float] = {}  # item id -> the child's wall time for it
        self._deadline_hit = False
        self._monitor = self._make_monitor()
        self.out.mkdir(parents=True, exist_ok=True)

    def options(self) -> dict[str, Any]:
        """The arguments that make this campaign again (without kernels, deadline and
        GPUs): what each GPU's worker builds its own from."""
        return dict(self._options)

    def counts(self) -> tuple[dict[str, int], dict[str, int]]:
        """Rows per table and per status that this run recorded itself."""
        return dict(self._rows), dict(self._statuses)

    def flush(self) -> None:
        """Write every accepted row now."""
        self._flush(force=True)

    def _deadlines(self) -> tuple[float | None, float | None]:
        if not self.deadline_s:
            return None, None
        reserve = max(5.0, min(30.0, 0.05 * self.deadline_s))
        return (self._t0 + self.deadline_s - reserve,
                self._t0 + self.deadline_s - max(2.0, reserve / 2))

    def _past_stop(self) -> bool:
        if self._stop_new is not None and time.monotonic() >= self._stop_new:
            self._deadline_hit = True
            return True
        return False

    def _make_monitor(self):
        return monitor_of(self.kind.monitor if self.kind is not None else "none")

    def _pool(self) -> ProcessPoolExecutor | None:
        if not self.workers:
            return None
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=get_context("spawn"))

    def _submit(self, pool, unit: Unit, root: Path) -> Future | None:
        configs = unit.configs()
        if pool is None or not configs or shutil.disk_usage(root).free < 20 * (1 << 30):
            return None
        return pool.submit(_prep_task, unit.kernel.name, unit.size,
                           [c.tunables for c in configs], str(root), self.seed,
                           str(self.corpus_root) if self.corpus_root else None, self._arch())

    def _arch(self) -> str | None:
        """The GPU's compile target, for compiling ahead (CUDA backends only)."""
        if self.backend not in ("cupy", "driver"):
            return None

        return get_device(self.device_key).ptx_target

    def _run_units(self, units: list[Unit], pool, prep_root: Path) -> None:
        """All GPU items in one measuring child (restarted only after a failure), with
        inputs prepared ahead unit by unit; then the counters batches."""
        self._units, self._pool, self._prep_root = units, pool, prep_root
        self._futures: dict[int, Future | None] = {}
        self._unit_of, self._unit_left = {}, {}
        for index, unit in enumerate(units):
            mine = [i for i in unit.items if i.experiment not in PROFILED]
            self._unit_of.update({i.id: index for i in mine})
            self._unit_left[index] = len(mine)
        self._prefetch()
        self._run_items([i for u in units for i in u.items if i.experiment not in PROFILED],
                        str(prep_root) if pool is not None else None)
        self._run_counters([i for u in units for i in u.items if i.experiment in PROFILED],
                           None)

    def _prefetch(self) -> None:
        """Keep the next ``workers`` units with items left being prepared."""
        if self._pool is None:
            return
        busy = sum(1 for i in self._futures if self._unit_left.get(i, 0) > 0)
        for index, unit in enumerate(self._units):
            if busy >= self.workers:
                return
            if self._unit_left.get(index, 0) > 0 and index not in self._futures:
                self._futures[index] = self._submit(self._pool, unit, self._prep_root)
                busy += 1

    def _prep_failures(self) -> list[str]:
        """A note per distinct error of the processes that prepared units ahead: their
        items prepared their inputs and references inline, item by item, instead."""
        errors: dict[str, list[str]] = {}
        for index, future in getattr(self, "_futures", {}).items():
            if future is None or not future.done() or future.cancelled():
                continue
            error = future.exception()
            if error is not None:
                unit = self._units[index]
                errors.setdefault(f"{type(error).__name__}: {error}", []).append(
                    f"{unit.kernel.name} {unit.size}")
        return [f"preparing inputs ahead failed for {', '.join(units)} ({error}): their items "
                "prepared them inline, item by item" for error, units in errors.items()]

    def _unit_progress(self, item: Item) -> None:
        """After an item: drop a finished unit's scratch files and prepare further ahead."""
        index = getattr(self, "_unit_of", {}).get(item.id)
        if index is None:
            return
        self._unit_left[index] -= 1
        if self._unit_left[index] == 0:
            unit = self._units[index]
            shutil.rmtree(self._prep_root / unit.kernel.name / unit.size, ignore_errors=True)
            self._flush(force=True)
            self._prefetch()

    # -- rows -----------------------------------------------------------------------------
    def _accept(self, item: Item, rows: list[tuple[str, dict]]) -> None:
        for table, row in rows:
            self._pending_rows.setdefault(table, []).append(row)
            self._rows[table] += 1
            self._statuses[str(row.get("status"))] += 1
        self._done += 1
        self._progress(self._done, self._total,
                       f"{item.kernel} {item.size} {item.experiment} {item.config}")
        self._flush()
        self._unit_progress(item)

    def _flush(self, force: bool = False) -> None:
        waiting = sum(len(r) for r in self._pending_rows.values())
        if not waiting:
            return
        if not force and waiting < self.flush_rows and time.monotonic() - self._last_flush < self.flush_s:
            return

        for table, rows in list(self._pending_rows.items()):
            if rows:
                write_part(self.out, table, [_schema_only(table, r) for r in rows])
            self._pending_rows[table] = []
        self._last_flush = time.monotonic()

    def _static(self, item: Item) -> dict[str, Any]:
        if item.experiment == "cpu":
            return c_provenance()


        described = self._describe or self._fallback_describe()
        return {"device": self.device_key, "device_name": described.get("device_name", ""),
                "driver_version": described.get("driver_version", ""),
                "runtime_version": described.get("runtime_version", ""),
                "backend": described.get("backend", self.backend),
                "kerncast_version": kerncast.__version__,
                "tool_versions": {**python_tool_versions(), **described.get("tool_versions", {})},
                "hostname": os.uname().nodename}

    def _fallback_describe(self) -> dict[str, Any]:
        try:
            name = get_device(self.device_key).name
        except InputError:
            name = self.device_key
        driver = ""
        nvml = self._monitor if hasattr(self._monitor, "driver_version") else None
        if nvml is not None:
            name, driver = nvml.name(), nvml.driver_version()
        return {"device_name": name, "driver_version": driver or "unknown",
                "runtime_version": "unknown", "backend": self.backend}

    def failure(self, item: Item, status: str, error: str) -> None:
        """Record a failure row for ``item`` (made here, not in the child)."""
        kernel = get_kernel(item.kernel, self.corpus_root)
        config = kernel.launch(item.size, dict(item.tunables))
        sms = 1 if item.experiment == "cpu" else (item.sm_count or self.total_sms)
        row = launch_columns(kernel, config, item.language, self._device_of(item), sms)
        failure_row(row, status, error)
        row.update(FAILURE_EXTRAS[item.table])
        if item.table == "times":
            row.update(experiment=item.experiment, sm_count_requested=sms)
        if item.table == "counters":
            row.update(sample_k=item.sample_k)
        if item.experiment == "samples-full":
            row.update(full_grid_columns(config))
        if item.experiment == "samples-paid":
            row.update(l2_state="paid")
        clocks = self._monitor.clocks()
        row.update(row_provenance(self._static(item), clocks, clocks, self.seed))
        self._accept(item, [(item.table, row)])

    def _run_items(self, items: list[Item], prep_dir: str | None) -> None:
        pending = list(items)
        while pending and not self._past_stop():
            job = {"backend": self.backend, "device": self.device_arg,
                   "items": [i.job() for i in pending], "seed": self.seed,
                   "corpus_root": str(self.corpus_root) if self.corpus_root else None,
                   "prep_dir": prep_dir, "policy": self.policy.to_dict(),
                   "item_timeout": self.item_timeout_s,
                   "stop_at": (time.time() + self._stop_new - time.monotonic())
                   if self._stop_new is not None else None}
            outcome = run_worker(job, lambda i, rows: self._accept(self._items[i], rows),
                                 self.item_timeout_s, self._hard)
            self._describe.update(outcome.describe)
            self._seconds.update(outcome.seconds)
            finished = set(outcome.finished)
            for item_id, (status, error) in outcome.failed.items():
                target = item_id if item_id >= 0 else next(
                    (i.id for i in pending if i.id not in finished), None)
                if target is not None:
                    finished.add(target)
                    self.failure(self._items[target], status, error)
            flight = outcome.in_flight
            if flight is not None and flight not in finished and not outcome.killed_at_deadline:
                finished.add(flight)
                self.failure(self._items[flight], "crash",
                             f"the measuring process died (exit {outcome.returncode}): "
                             f"{crash_report(outcome.stderr_tail)}")
            if outcome.stopped or outcome.killed_at_deadline:
                self._deadline_hit = True
                return
            progressed = finished & {i.id for i in pending}
            pending = [i for i in pending if i.id not in finished]
            if pending and not progressed:
                first = pending.pop(0)
                self.failure(first, "crash", f"the measuring process exited "
                             f"({outcome.returncode}) before measuring anything: "
                             f"{crash_report(outcome.stderr_tail)}")

    def _run_counters(self, items: list[Item], prep_dir: str | None) -> None:
        if not items:
            return

        run_counters(self, items, prep_dir)

    def log_session(self, event: str, **info: Any) -> None:
        if not self.log:
            return

        path = self.out / "campaign.json"
        try:
            log = json.loads(path.read_text()) if path.exists() else []
        except (OSError, json.JSONDecodeError):
            log = []
        log.append({"event": event, "at": utc_now(), "host": os.uname().nodename,
                    "backend": self.backend, "device": self.device_key,
                    "experiments": self.experiments, "sizes": self.sizes,
                    "kernels": self.kernel_names, "configs": self.configs,
                    "deadline_s": self.deadline_s, **info})
        tmp = path.with_name(".campaign.json.tmp")
        tmp.write_text(json.dumps(log, indent=1, default=str))
        tmp.replace(path)


def _raise_interrupt(signum, frame):  # noqa: ARG001
    raise KeyboardInterrupt


def _schema_only(table: str, row: dict) -> dict:
    known = {c.name for c in columns(table)}
    return {k: v for k, v in row.items()
            if k in known or (table == "counters" and _is_metric(k))}

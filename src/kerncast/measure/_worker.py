"""The measuring child process of a campaign.

Run as ``python -m kerncast.measure._worker JOB.json``; it measures the job's items
one after another and reports on standard output, one line per event::

    KC:READY {describe}          the backend is up (its provenance)
    KC:START <id>                an item begins
    KC:ROW <table> {row}         a row of that item
    KC:DONE <id> <seconds>       the item's rows are complete, after this wall time
    KC:STOPPED                   the deadline came; no new item was started
    KC:FATAL <message>           nothing can be measured here (no GPU, no library)

The parent commits an item's rows only after ``KC:DONE``, kills the child when an
item exceeds its timeout, and writes the failure row of an item in flight when the
child dies. After a launch failure (the CUDA context may be unusable) the child exits
with status 3 and the parent starts a new one for the remaining items.

A sweep keeps one backend per SM count alive (a green context with its stream, loaded
modules and L2 flush buffer) rather than making one for every item: the plan runs the
SM counts of each configuration in turn, so nearly every item changes the count, and
closing the only driver backend of a process also tears down the primary context it
holds (about 0.2 s of host time to make again). The backend in use is made current
before an item and put back after it, and every backend is closed when the child ends.
"""

from __future__ import annotations

import faulthandler
import json
import math
import sys
import time
import traceback
from collections import OrderedDict
from pathlib import Path
from typing import Any
from kerncast.measure._backend import Backend
from kerncast.measure._timing import TimingPolicy
from kerncast.measure._factory import make_backend
from kerncast.measure._api import monitor_for
from kerncast.corpus import get_kernel
from kerncast.measure._cpu import measure_c
from kerncast.measure._plan import SWEPT
from kerncast.measure._samples import measure_full, measure_paid, measure_samples
from kerncast.measure._energy import measure_energy
from kerncast.measure._nvml import NvmlEnergyObserver
from kerncast._errors import KerncastError, ToolchainError

__all__ = ["RESTART_EXIT", "SWEEP_BACKENDS", "main"]

RESTART_EXIT = 3
# the default sweep's 7 SM counts and a spare: each holds a green context (~5 MiB) and a flush
# buffer of twice the L2 (120 MiB on an H200), ~1 GiB for 8; past them the least recent closes
SWEEP_BACKENDS = 8


def _emit(tag: str, payload: str = "") -> None:
    sys.stdout.write(f"KC:{tag} {payload}\n" if payload else f"KC:{tag}\n")
    sys.stdout.flush()


def _json(obj: Any) -> str:
    def default(value: Any) -> Any:
        if hasattr(value, "item"):
            return value.item()
        return str(value)

    def clean(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value

    return json.dumps({k: clean(v) for k, v in obj.items()}, default=default)


class _Runner:
    """Backends, monitor and observers of one worker, created on first use.

    Every backend is made while no other is current (the one in use is put back
    first), so each one's close restores a context that is still alive, in any order.
    """

    def __init__(self, job: dict):
        self.job = job
        self.root = Path(job["corpus_root"]) if job.get("corpus_root") else None
        self._main: Backend | None = None
        self._sweeps: OrderedDict[int, Backend] = OrderedDict()  # least recently used first
        self._active: Backend | None = None
        self._monitor = None

        self.policy = TimingPolicy(**job.get("policy", {}))

    def main_backend(self) -> Backend:
        if self._main is None:
            self._leave()
            self._main = make_backend(self.job["backend"], device=self.job.get("device"))
            _emit("READY", _json(self._main.describe()))
        return self._enter(self._main)

    def sweep_backend(self, sm_count: int) -> Backend:
        """The backend limited to ``sm_count`` SMs, kept for later items at that count."""
        backend = self._sweeps.get(sm_count)
        if backend is None:
            self._leave()
            while len(self._sweeps) >= SWEEP_BACKENDS:
                self._sweeps.popitem(last=False)[1].close()
            name = self.job.get("sweep_backend", "driver")
            backend = make_backend(name, device=self.job.get("device"), sm_count=sm_count)
            self._sweeps[sm_count] = backend
        self._sweeps.move_to_end(sm_count)
        return self._enter(backend)

    def _enter(self, backend: Backend) -> Backend:
        if backend is not self._active:
            self._leave()
            backend.activate()
            self._active = backend
        return backend

    def _leave(self) -> None:
        if self._active is not None:
            active, self._active = self._active, None
            active.deactivate()

    def close(self) -> None:
        """Close every backend: the sweep backends, most recently used first, then the
        main one; a failing close is reported on stderr and the rest still close."""
        backends = [*reversed(self._sweeps.values()), self._main]
        self._sweeps.clear()
        self._main = None
        for step in (self._leave, *(b.close for b in backends if b is not None)):
            try:
                step()
            except Exception:  # noqa: BLE001 (the child is ending; its rows are sent)
                sys.stderr.write(traceback.format_exc())

    def monitor(self, backend):
        if self._monitor is None:
            self._monitor = monitor_for(backend)
        return self._monitor

    def rows(self, item: dict) -> list[tuple[str, dict]]:
        kernel = get_kernel(item["kernel"], self.root)
        config = kernel.launch(item["size"], item.get("tunables") or {})
        common = {"seed": self.job.get("seed", 0), "prep_dir": self.job.get("prep_dir")}
        experiment = item["experiment"]
        if experiment == "cpu":
            return [("cpu", measure_c(kernel, config, seed=common["seed"],
                                      timeout=self.job.get("item_timeout", 600)))]

        if experiment in SWEPT:
            backend = self.sweep_backend(item["sm_count"])
        else:
            backend = self.main_backend()
        monitor = self.monitor(backend)
        if experiment in ("times", "sm-sweep"):
            row = backend.measure(kernel, config, policy=self.policy, monitor=monitor,
                                  experiment=experiment,
                                  sm_count_requested=item.get("sm_count"), **common)
            return [("times", row)]
        if experiment in ("samples", "samples-full", "samples-paid"):
            run = {"samples": measure_samples, "samples-full": measure_full,
                   "samples-paid": measure_paid}[experiment]
            rows = run(backend, kernel, config, policy=self.policy, monitor=monitor, **common)
            return [("samples", r) for r in rows]
        if experiment in ("energy", "energy-sweep"):
            observer = NvmlEnergyObserver(monitor)
            return [("energy", measure_energy(backend, kernel, config, observer, monitor=monitor,
                                              **common))]
        raise ValueError(f"unknown experiment {experiment!r}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # a segmentation fault or abort in a driver or library prints the Python stack to
    # stderr, whose tail the campaign records in the item's crash row
    faulthandler.enable(all_threads=True)
    job = json.loads(Path(argv[0]).read_text())
    runner = _Runner(job)
    try:
        return _measure(job, runner)
    finally:
        runner.close()


def _measure(job: dict, runner: _Runner) -> int:
    """Measure the job's items in order; the exit status (see the module)."""
    stop_at = job.get("stop_at")
    for item in job["items"]:
        if stop_at is not None and time.time() >= stop_at:
            _emit("STOPPED")
            return 0
        _emit("START", str(item["id"]))
        started = time.perf_counter()
        try:
            rows = runner.rows(item)
        except ToolchainError as exc:
            _emit("FATAL", str(exc).replace("\n", " "))
            return 2
        except KerncastError as exc:
            _emit("FAILED", _json({"id": item["id"], "error": str(exc)}))
            continue
        except Exception as exc:  # noqa: BLE001 (reported as the item's failure by the parent)
            sys.stderr.write(traceback.format_exc())
            _emit("FAILED", _json({"id": item["id"], "error": f"{type(exc).__name__}: {exc}"}))
            continue
        for table, row in rows:
            _emit("ROW", f"{table} {_json(row)}")
        _emit("DONE", f"{item['id']} {time.perf_counter() - started:.6f}")
        if any(row.get("status") == "launch_failed" for _, row in rows):
            return RESTART_EXIT
    return 0


if __name__ == "__main__":
    sys.exit(main())

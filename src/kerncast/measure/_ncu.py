"""Nsight Compute counters: one profiled child process per batch of launches.

:class:`NcuObserver` runs ``ncu --clock-control none`` (clocks are never touched)
over ``python -m kerncast.measure._ncu_child JOB``, which launches each (kernel,
configuration) of the batch exactly once, and turns the CSV into ``counters`` rows:
one row per launch, one float column per metric, values in base units. The i-th
profiled result belongs to the i-th launch the child made (launches are filtered
by kernel name, and the name and grid of each result are checked against the
launch). Metric names are first checked against ``ncu --query-metrics``: unknown
ones are dropped and reported rather than failing the batch.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kerncast._errors import ToolchainError
from kerncast.data import metric_names
from kerncast.measure._provenance import ncu_path, ncu_version

__all__ = ["NcuBatch", "NcuObserver", "NcuResult", "available_metrics", "parse_ncu_csv",
           "parse_value", "split_metrics"]

_TIME = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0, "ns": 1e-9,
         "us": 1e-6, "ms": 1e-3, "s": 1.0}
_PREFIX = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_METRIC_LINE = re.compile(r"^\s*([a-z0-9]+__[a-z0-9_]+)\b")


def _unit_scale(unit: str) -> float:
    unit = unit.strip()
    if not unit or unit in ("%", "inst", "byte", "cycle"):
        return 1.0
    if unit in _TIME:
        return _TIME[unit]
    if len(unit) > 1 and unit[0] in _PREFIX and unit[1:].isalpha() and unit[1:].islower():
        return _PREFIX[unit[0]] * _unit_scale(unit[1:])
    return 1.0


def unit_factor(unit: str) -> float:
    """Factor to base units of an Nsight Compute unit (``Kbyte``, ``usecond``, ``Gbyte/second``)."""
    if "/" in unit:
        num, _, den = unit.partition("/")
        return _unit_scale(num) / _unit_scale(den)
    return _unit_scale(unit)


def parse_value(text: str, unit: str = "") -> float:
    """A metric value in base units (thousands separators removed; ``n/a`` is NaN)."""
    text = (text or "").strip().replace(",", "")
    if not text or text.lower() in ("n/a", "nan", "-"):
        return math.nan
    try:
        return float(text) * unit_factor(unit)
    except ValueError:
        return math.nan


@dataclass
class NcuResult:
    """One profiled launch."""

    id: int
    kernel_name: str
    grid: str
    block: str
    metrics: dict[str, float] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)


def parse_ncu_csv(text: str) -> list[NcuResult]:
    """The results of ``ncu --csv`` output, in ID order (``==PROF==`` lines are skipped)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    body = [line for line in lines[start:] if line.startswith('"')]
    results: dict[int, NcuResult] = {}
    for rec in csv.DictReader(io.StringIO("\n".join(body))):
        try:
            rid = int(str(rec.get("ID", "")).replace(",", ""))
        except ValueError:
            continue
        res = results.get(rid)
        if res is None:
            res = results[rid] = NcuResult(rid, rec.get("Kernel Name", ""),
                                           rec.get("Grid Size", ""), rec.get("Block Size", ""))
        name, unit = rec.get("Metric Name", ""), rec.get("Metric Unit", "") or ""
        if name:
            res.metrics[name] = parse_value(rec.get("Metric Value", ""), unit)
            res.units[name] = unit
    return [results[k] for k in sorted(results)]


def parse_query_metrics(text: str) -> set[str]:
    """Base metric names listed by ``ncu --query-metrics``."""
    return {m.group(1) for line in text.splitlines() if (m := _METRIC_LINE.match(line))}


def split_metrics(names: list[str], available: set[str]) -> tuple[list[str], list[str]]:
    """(known, unknown): a metric is known when its name or its base name is available."""
    kept, missing = [], []
    for name in names:
        base = name.split(".", 1)[0]
        (kept if name in available or base in available else missing).append(name)
    return kept, missing


def available_metrics(ncu: str | None = None, timeout: float = 120) -> set[str]:
    """The metric names this GPU's Nsight Compute knows (``ncu --query-metrics``)."""
    ncu = ncu or ncu_path()
    if ncu is None:
        raise ToolchainError("Nsight Compute (ncu) is not installed; the counters experiment "
                             "needs it (CUDA toolkit: /usr/local/cuda/bin/ncu)")
    proc = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True,
                          timeout=timeout)
    names = parse_query_metrics(proc.stdout)
    if not names:
        raise ToolchainError(f"ncu --query-metrics listed no metrics (exit {proc.returncode}): "
                             f"{(proc.stderr or proc.stdout).strip()[-300:]}")
    return names


@dataclass
class NcuBatch:
    """What one profiled child did: its manifest lines and the parsed results."""

    manifest: list[dict]
    results: list[NcuResult]
    describe: dict[str, Any]
    returncode: int
    log_tail: str
    timed_out: bool = False


class NcuObserver:
    """Profile batches of launches with Nsight Compute.

    Parameters
    ----------
    metrics
        Metric names (default: :data:`kerncast.data.METRICS`).
    ncu
        Path of ``ncu`` (default: found on PATH or in /usr/local/cuda/bin).
    """

    def __init__(self, metrics: list[str] | None = None, ncu: str | None = None):
        self.ncu = ncu or ncu_path()
        self.requested = list(metrics or metric_names())
        self.metrics = list(self.requested)
        self.missing: list[str] = []

    @property
    def version(self) -> str:
        return ncu_version(self.ncu)

    def check_metrics(self, available: set[str] | None = None) -> list[str]:
        """Drop the metrics this ncu does not know; return the dropped ones."""
        available = available if available is not None else available_metrics(self.ncu)
        self.metrics, self.missing = split_metrics(self.requested, available)
        return self.missing

    def command(self, job: Path, log: Path, entries: list[str]) -> list[str]:
        if self.ncu is None:
            raise ToolchainError("Nsight Compute (ncu) is not installed; the counters "
                                 "experiment needs it")
        names = "|".join(sorted({re.escape(e) for e in entries}))
        # entries are PTX symbols (a C++ kernel's mangled name): match and print those
        return [self.ncu, "--clock-control", "none", "--print-units", "base", "--csv",
                "--log-file", str(log), "--metrics", ",".join(self.metrics),
                "--kernel-name-base", "mangled", "--print-kernel-base", "mangled",
                "--kernel-name", f"regex:^({names})$",
                sys.executable, "-m", "kerncast.measure._ncu_child", str(job)]

    def profile(self, job: dict, entries: list[str], timeout: float) -> NcuBatch:
        """Run one batch; ``job`` is the child's job (items, device, seed, ...)."""
        with tempfile.TemporaryDirectory(prefix="kerncast-ncu-") as tmp:
            tmp_path = Path(tmp)
            manifest = tmp_path / "manifest.jsonl"
            job_path = tmp_path / "job.json"
            job_path.write_text(json.dumps({**job, "manifest": str(manifest)}))
            log = tmp_path / "ncu.log"
            env = dict(os.environ)
            src = str(Path(__file__).resolve().parents[2])
            env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
            timed_out = False
            try:
                proc = subprocess.run(self.command(job_path, log, entries), capture_output=True,
                                      text=True, timeout=timeout, env=env)
                code, out = proc.returncode, proc.stdout + proc.stderr
            except subprocess.TimeoutExpired as exc:
                timed_out, code = True, -9
                out = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) \
                    else (exc.stdout or "")
            text = (log.read_text(errors="replace") if log.exists() else "") + "\n" + out
            lines = [json.loads(x) for x in manifest.read_text().splitlines()] \
                if manifest.exists() else []
        header = next((m for m in lines if m.get("describe")), None)
        described = {**header["describe"], "sm_count": header.get("sm_count"),
                     "device_key": header.get("device_key")} if header else {}
        return NcuBatch([m for m in lines if "index" in m], parse_ncu_csv(text), described,
                        code, text[-2000:], timed_out)

"""The ``cpu`` experiment: the single-threaded C version of a kernel, timed over its ROI.

The program is built with :func:`kerncast.corpus._cversion.build_c`, the launch's data
are written once with :func:`~kerncast.corpus._cversion.write_run_dir`, and the
program runs ``reps`` times on them (the harness prints the region of interest's
time and whether the outputs matched the reference).
"""

from __future__ import annotations

import math
import platform
import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any
import socket

from kerncast._errors import KerncastError
from kerncast.corpus import CorpusKernel, LaunchConfig
from kerncast.corpus import CFLAGS, build_c, write_run_dir
from kerncast.measure._provenance import (
    CpuMonitor,
    cpu_model,
    host_cpu_key,
    python_tool_versions,
    row_provenance,
)
from kerncast.measure._run import failure_row, launch_columns
from kerncast.measure._timing import TimingPolicy, should_stop, summarize
import kerncast

__all__ = ["c_provenance", "measure_c"]

#: Seconds of runs after which the C version is not repeated: a single-threaded run that
#: long varies little, and three of them would outlast a campaign item (arith_fp32 takes
#: about 200 s at size large).
LONG_RUNS_S = 60.0

_LINE = re.compile(r"kerncast-c: kernel=(\S+) roi_seconds=([0-9.eE+-]+) status=(\w+)")


@lru_cache(maxsize=1)
def _gcc_version() -> str:
    gcc = shutil.which("gcc") or shutil.which("cc")
    if not gcc:
        return ""
    out = subprocess.run([gcc, "--version"], capture_output=True, text=True).stdout
    return out.splitlines()[0].strip() if out else ""


def c_provenance() -> dict[str, Any]:
    """Static provenance of C runs on this machine."""
    return {"device": host_cpu_key(), "device_name": cpu_model(),
            "driver_version": platform.release(), "runtime_version": _gcc_version(),
            "backend": "c", "kerncast_version": kerncast.__version__,
            "tool_versions": {**python_tool_versions(), "gcc": _gcc_version(),
                              "cflags": " ".join(CFLAGS)},
            "hostname": socket.gethostname()}


def _run(program: Path, kernel: str, directory: str, timeout: float) -> tuple[float, str, str]:
    try:
        proc = subprocess.run([str(program), kernel, directory], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return math.nan, "timeout", f"timed out after {timeout:g} s"
    match = _LINE.search(proc.stdout)
    if match is None:
        message = (proc.stderr or proc.stdout).strip() or f"exit code {proc.returncode}"
        return math.nan, "crash", message
    if match.group(3) != "ok" or proc.returncode != 0:
        return float(match.group(2)), "wrong_output", proc.stderr.strip() or "outputs differ"
    return float(match.group(2)), "ok", ""


def measure_c(kernel: CorpusKernel, config: LaunchConfig, *, seed: int = 0, reps: int = 3,
              timeout: float = 600.0) -> dict:
    """One ``cpu`` row: the C version's ROI time over ``reps`` runs on one launch's data
    (fewer once the runs add up to :data:`LONG_RUNS_S`)."""
    monitor = CpuMonitor()
    static = c_provenance()
    row = launch_columns(kernel, config, "c", static["device"], 1)
    before = monitor.clocks()
    times: list[float] = []
    status, error = "ok", ""
    try:
        program = build_c(kernel.app)
        with tempfile.TemporaryDirectory(prefix="kerncast-c-") as tmp:
            write_run_dir(kernel, config, Path(tmp), seed)
            for _ in range(max(1, reps)):
                seconds, status, error = _run(program, kernel.name, tmp, timeout)
                if status != "ok":
                    break
                times.append(seconds)
                if sum(times) >= LONG_RUNS_S:
                    break
    except KerncastError as exc:
        status, error = "compile_failed", str(exc)
    if status == "ok":
        converged = should_stop(times, TimingPolicy(min_reps=1), 0.0)[1]
        row.update(summarize(times, converged).columns(), status="ok", error="")
        row["warmup"] = 0
    else:
        failure_row(row, status, error)
    row.update(row_provenance(static, before, monitor.clocks(), seed))
    return row

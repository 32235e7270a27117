"""Provenance stamped on every row: who measured, on what, with which tools, when.

Static fields come from the backend (device and driver) and the environment
(versions, host); clocks come from a monitor read before and after each measurement:
:class:`~kerncast.measure._nvml.Nvml` on NVIDIA GPUs, :class:`CpuMonitor` on CPUs.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import shutil
import socket
import subprocess
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any
import kerncast
from kerncast.execute import CORES_VARIABLE

__all__ = [
    "CpuMonitor",
    "NullMonitor",
    "cpu_model",
    "host_cpu_key",
    "ncu_path",
    "ncu_version",
    "python_tool_versions",
    "row_provenance",
    "static_provenance",
    "utc_now",
]

PYTHON_PACKAGES = ("numpy", "pandas", "pyarrow", "cupy-cuda13x", "cupy-cuda12x", "cupy",
                   "cuda-bindings", "cuda-python", "nvidia-ml-py", "pyopencl")


def utc_now() -> str:
    """The current time as ISO 8601 UTC with microseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


@lru_cache(maxsize=1)
def python_tool_versions() -> dict[str, str]:
    """Versions of Python and the installed packages that measurements depend on."""
    versions = {"python": platform.python_version()}
    for name in PYTHON_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def ncu_path() -> str | None:
    """Nsight Compute's command line, from PATH or the CUDA toolkit's usual place."""
    found = shutil.which("ncu")
    if found:
        return found
    for candidate in ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu"):
        if Path(candidate).exists():
            return candidate
    return None


@lru_cache(maxsize=4)
def ncu_version(path: str | None = None) -> str:
    """``ncu --version``'s version number, or "" when there is no ncu."""
    path = path or ncu_path()
    if not path:
        return ""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    match = re.search(r"Version\s+([0-9][0-9.]*)", out)
    return match.group(1) if match else out.strip().splitlines()[-1] if out.strip() else ""


@lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``, else the platform's processor string)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown-cpu"


def host_cpu_key(cores: int | None = None) -> str:
    """The device key of this machine's CPU: ``cpu:<model, lower-case, dashed>``; of a
    slice of its ``cores`` (by default those of the slice this process measures on, if
    any: :data:`kerncast.execute.CORES_VARIABLE`), ``cpu:<model>-<cores>-cores``: a
    device of its own, whose rows never stand for the whole machine's."""
    slug = re.sub(r"[^a-z0-9]+", "-", cpu_model().lower()).strip("-")
    cores = cores or int(os.environ.get(CORES_VARIABLE) or 0)
    return f"cpu:{slug[:60]}" + (f"-{cores}-cores" if cores else "")


def _cpu_mhz() -> float:
    try:
        values = [float(line.split(":", 1)[1]) for line in Path("/proc/cpuinfo").read_text()
                  .splitlines() if line.lower().startswith("cpu mhz")]
    except (OSError, ValueError):
        values = []
    return sum(values) / len(values) if values else math.nan


class CpuMonitor:
    """Clocks of a CPU device: the mean core clock; CPUs report no memory clock."""

    def clocks(self) -> tuple[float, float]:
        return _cpu_mhz(), math.nan


class NullMonitor:
    """A monitor that knows no clocks (used where nothing can be read)."""

    def clocks(self) -> tuple[float, float]:
        return math.nan, math.nan


def static_provenance(backend: Any) -> dict[str, Any]:
    """The fields that stay the same for every row a backend measures (cached on it)."""
    cached = getattr(backend, "_kc_provenance", None)
    if cached is not None:
        return cached

    described = backend.describe()
    tools = {**python_tool_versions(), **described.get("tool_versions", {})}
    prov = {
        "device": backend.device_key,
        "device_name": described.get("device_name", ""),
        "driver_version": described.get("driver_version", ""),
        "runtime_version": described.get("runtime_version", ""),
        "backend": described.get("backend", backend.name),
        "kerncast_version": kerncast.__version__,
        "tool_versions": tools,
        "hostname": socket.gethostname(),
    }
    try:
        backend._kc_provenance = prov
    except AttributeError:
        pass
    return prov


def row_provenance(static: dict[str, Any], before: tuple[float, float],
                   after: tuple[float, float], seed: int) -> dict[str, Any]:
    """The provenance columns of one row."""
    tools = static.get("tool_versions", {})
    return {
        **{k: v for k, v in static.items() if k != "tool_versions"},
        "tool_versions": json.dumps(tools, sort_keys=True),
        "sm_clock_mhz_before": before[0], "mem_clock_mhz_before": before[1],
        "sm_clock_mhz_after": after[0], "mem_clock_mhz_after": after[1],
        "measured_at": utc_now(), "seed": int(seed),
    }

"""The measurement schema: every table's columns, their types, meaning and provenance.

This module is the single source of truth for the columns of a kerncast dataset;
``data/SCHEMA.md`` is generated from it (``python tools/write_schema.py``)
and a test keeps the two in sync. :func:`validate` checks a table read from a file
and :func:`conform` casts freshly measured rows before they are written.

Types: ``str``, ``int``, ``float``, ``bool``; ``json`` is a string holding a JSON
object; ``time`` is an ISO 8601 UTC timestamp string. Nullable ``int`` columns may
come back from Parquet as floats (pandas turns integer columns with nulls into
float64); :func:`validate` accepts that when every value is integral.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from kerncast._errors import InputError
from kerncast.data._metrics import METRICS

__all__ = [
    "COUNTER_METRIC_PATTERN",
    "STATUSES",
    "TABLE_KEYS",
    "Column",
    "columns",
    "conform",
    "provenance_columns",
    "render_markdown",
    "validate",
]

# Outcomes of one measurement. A row is written for every one of them.
STATUSES = {
    "ok": "measured; outputs matched the NumPy reference (where checked)",
    "wrong_output": "ran, but an output differs from the reference; `error` names the first mismatch",
    "compile_failed": "the compiler (NVRTC, the OpenCL driver, gcc) refused the source",
    "launch_failed": "the launch or a later synchronisation raised a driver error",
    "timeout": "the run did not finish within the item timeout and was killed",
    "crash": "the measuring child process died (signal or non-zero exit)",
    "too_large": "the buffers do not fit in device memory; refused before allocation",
    "out_of_memory": "an allocation failed although the estimate fitted",
    "invalid_config": "the launch cannot run on the device (block too large, no resident block)",
    "profiler_failed": "Nsight Compute returned no result for a launch that ran",
    "host_bound": "an energy loop the host's launch rate left the GPU idle for more than a "
                  "tenth of its time: its power is not the kernel's",
}

# Regular expression (documentation) for the metric columns of ``counters``.
COUNTER_METRIC_PATTERN = r"^[a-z0-9]+__[a-z0-9_.]+$"


@dataclass(frozen=True)
class Column:
    """One column of a table."""

    name: str
    dtype: str
    meaning: str
    provenance: bool = False
    nullable: bool = False
    cpu_nullable: bool = False  # may be null on CPU devices (no such clock or driver)


def _c(name, dtype, meaning, **kw) -> Column:
    return Column(name, dtype, meaning, **kw)


KEY = [
    _c("kernel", "str", "corpus kernel name"),
    _c("language", "str", "source language run: cuda, opencl or c"),
    _c("size", "str", "problem size name (small, medium, large)"),
    _c("config", "str", "launch label: the tunables as k=v,... sorted, or 'default'"),
    _c("device", "str", "device spec key (kerncast.devices.get_device resolves it); "
       "'cpu:<model>' for CPU devices"),
    _c("sm_count", "int", "SMs the launch could use (granted by the green context, or the whole "
       "GPU); CPU devices: compute units (PoCL) or 1 (single-threaded C)"),
]

LAUNCH = [
    _c("grid_x", "int", "grid size in blocks, x"),
    _c("grid_y", "int", "grid size in blocks, y"),
    _c("grid_z", "int", "grid size in blocks, z"),
    _c("block_x", "int", "block size in threads, x"),
    _c("block_y", "int", "block size in threads, y"),
    _c("block_z", "int", "block size in threads, z"),
    _c("blocks", "int", "blocks in the full grid"),
    _c("threads_per_block", "int", "threads in one block"),
    _c("dynamic_shared", "int", "dynamic shared memory per block, bytes"),
    _c("tunables", "json", "the launch's tunables"),
    _c("params", "json", "problem-size parameters (with derived names)"),
]

RESOURCES = [
    _c("registers", "int", "registers per thread (the function's attributes)", nullable=True),
    _c("static_shared", "int", "static shared memory per block, bytes", nullable=True),
    _c("local_bytes", "int", "local memory (spills, stack) per thread, bytes", nullable=True),
]

OUTCOME = [
    _c("status", "str", "one of the statuses below"),
    _c("error", "str", "what went wrong (empty when status is ok)"),
]

STATS = [
    _c("time_median_s", "float", "median time of one launch, seconds", nullable=True),
    _c("time_min_s", "float", "fastest launch, seconds", nullable=True),
    _c("time_mean_s", "float", "mean launch time, seconds", nullable=True),
    _c("time_iqr_s", "float", "interquartile range of the launch times (spread), seconds",
       provenance=True, nullable=True),
    _c("time_ci_low_s", "float", "95% confidence interval of the median, low end", nullable=True),
    _c("time_ci_high_s", "float", "95% confidence interval of the median, high end",
       nullable=True),
    _c("repetitions", "int", "timed launches behind the statistics", provenance=True),
    _c("converged", "bool", "the stopping rule was met (the median's CI under the tolerance) "
       "before the repetition or time limit"),
    _c("warmup", "int", "untimed launches before timing"),
]

PROVENANCE = [
    _c("device_name", "str", "the name the driver reports", provenance=True),
    _c("driver_version", "str", "GPU driver version (PoCL: its driver version; C: the OS "
       "kernel release)", provenance=True),
    _c("runtime_version", "str", "CUDA version the driver supports (OpenCL: the platform "
       "version; C: the compiler version)", provenance=True),
    _c("backend", "str", "measuring backend: cupy, driver (green contexts), opencl, pocl, c",
       provenance=True),
    _c("sm_clock_mhz_before", "float", "SM clock seen before the measurement, MHz (CPU: core "
       "clock)", provenance=True, cpu_nullable=True),
    _c("sm_clock_mhz_after", "float", "SM clock seen after the measurement, MHz",
       provenance=True, cpu_nullable=True),
    _c("mem_clock_mhz_before", "float", "memory clock seen before, MHz (null on CPUs)",
       provenance=True, cpu_nullable=True),
    _c("mem_clock_mhz_after", "float", "memory clock seen after, MHz (null on CPUs)",
       provenance=True, cpu_nullable=True),
    _c("measured_at", "time", "when the measurement ended, ISO 8601 UTC", provenance=True),
    _c("kerncast_version", "str", "kerncast version that measured", provenance=True),
    _c("tool_versions", "json", "versions of python, numpy, cupy, cuda-bindings, pyopencl, "
       "ncu, nvrtc ... that were used (and gpu_pci_bus_id: which GPU of the machine)",
       provenance=True),
    _c("hostname", "str", "machine that measured", provenance=True),
    _c("seed", "int", "seed of the input generator", provenance=True),
]

TIMES = KEY + LAUNCH + RESOURCES + OUTCOME + STATS + [
    _c("experiment", "str", "times (whole GPU) or sm-sweep (SM count limited by a green "
       "context)"),
    _c("sm_count_requested", "int", "SMs asked for (sm_count is what was granted)"),
    _c("input_sets", "int", "copies of the inputs cycled between launches (>1 when all buffers "
       "fit in twice the L2 cache)"),
] + PROVENANCE

SAMPLES = KEY + LAUNCH + RESOURCES + OUTCOME + STATS + [
    _c("k", "int", "sample multiplier: the first k * psat * n_sm blocks were launched"),
    _c("psat", "int", "resident blocks per SM (kerncast.devices.occupancy, real registers "
       "and shared memory)"),
    _c("blocks_requested", "int", "k * psat * sm_count"),
    _c("blocks_launched", "int", "blocks in the sampled grid (whole rows of blocks)"),
    _c("grid_fraction", "float", "blocks_launched / blocks of the full grid"),
    _c("sample_grid_x", "int", "sampled grid, x"),
    _c("sample_grid_y", "int", "sampled grid, y"),
    _c("sample_grid_z", "int", "sampled grid, z"),
    _c("first_block", "int", "the sample's first block (x fastest): 0 for the ladder, which runs "
       "from the grid's start; more for the same sample run from the middle of the grid"),
    _c("l2_state", "str", "warm (repeated launches), cold (L2 flushed before each launch) or "
       "paid (a reading flush before, the write-back of the launch's stores timed with it)"),
] + PROVENANCE

COUNTERS = KEY + LAUNCH + RESOURCES + OUTCOME + [
    _c("ncu_id", "int", "Nsight Compute's result ID within its batch", nullable=True),
    _c("ncu_kernel_name", "str", "kernel name Nsight Compute reported"),
    _c("metrics_missing", "str", "metrics of the set that this ncu did not know (comma list)"),
    _c("sample_k", "int", "0 for the whole launch; k for a sampled launch of the first "
       "k * psat * sm_count blocks (the sample-counters experiment)"),
    _c("psat", "int", "resident blocks per SM used to size the sample", nullable=True),
    _c("blocks_launched", "int", "blocks the profiled launch ran", nullable=True),
] + PROVENANCE

ENERGY = KEY + LAUNCH + RESOURCES + OUTCOME + [
    _c("launches", "int", "launches in the measured loop"),
    _c("duration_s", "float", "wall time of the loop, seconds", nullable=True),
    _c("energy_j", "float", "energy of the loop from NVML's total-energy counter, joules",
       nullable=True),
    _c("energy_per_launch_j", "float", "energy_j / launches", nullable=True),
    _c("avg_power_w", "float", "energy_j / duration_s, watts", nullable=True),
    _c("power_samples_mean_w", "float", "mean of NVML power readings during the loop",
       nullable=True),
    _c("power_samples_max_w", "float", "largest NVML power reading during the loop",
       nullable=True),
    _c("power_samples", "int", "NVML power readings taken"),
    _c("idle_power_w", "float", "NVML power reading just before the loop", nullable=True),
    _c("time_per_launch_s", "float", "duration_s / launches", nullable=True),
    _c("gpu_busy_fraction", "float", "launches * median launch time / duration_s (how much of "
       "the loop the kernel kept the GPU busy)", nullable=True),
] + PROVENANCE

CPU = KEY + LAUNCH + OUTCOME + STATS + PROVENANCE

_TABLES = {"times": TIMES, "samples": SAMPLES, "counters": COUNTERS, "energy": ENERGY, "cpu": CPU}

# Columns that identify one row of each table.
_KEY_NAMES = [c.name for c in KEY]
TABLE_KEYS = {
    "times": _KEY_NAMES,
    "samples": [*_KEY_NAMES, "k", "first_block", "l2_state"],
    "counters": [*_KEY_NAMES, "sample_k"],
    "energy": _KEY_NAMES,
    "cpu": _KEY_NAMES,
}


def columns(table: str) -> list[Column]:
    """The declared columns of ``table`` (``counters`` also has one column per metric)."""
    if table not in _TABLES:
        raise InputError(f"unknown table {table!r}; the tables are {', '.join(_TABLES)}")
    return list(_TABLES[table])


def provenance_columns(table: str) -> list[Column]:
    return [c for c in columns(table) if c.provenance]


def _is_metric(name: str) -> bool:
    return re.match(COUNTER_METRIC_PATTERN, name) is not None


def _dtype_ok(series, col: Column) -> bool:
    api = pd.api.types
    if col.dtype in ("str", "json", "time"):
        return api.is_string_dtype(series) or api.is_object_dtype(series) or series.isna().all()
    if col.dtype == "bool":
        return api.is_bool_dtype(series)
    if col.dtype == "float":
        return api.is_float_dtype(series) or api.is_integer_dtype(series)
    if api.is_integer_dtype(series):
        return True
    if col.nullable and api.is_float_dtype(series):
        values = series.dropna()
        return bool(((values % 1) == 0).all())
    return False


def validate(table: str, frame, source: str = "<table>") -> None:
    """Check ``frame`` against the schema of ``table``.

    Raises
    ------
    InputError
        Naming ``source`` and the column: a required column missing, a column of the
        wrong type, a status outside :data:`STATUSES`, a null where none is allowed.
    """
    for col in columns(table):
        if col.name not in frame.columns:
            raise InputError(f"{source}: the {table} table lacks the column {col.name!r} "
                             f"({col.meaning}); the file was not written by this kerncast")
        series = frame[col.name]
        if not _dtype_ok(series, col):
            raise InputError(f"{source}: column {col.name!r} has type {series.dtype}, but the "
                             f"schema says {col.dtype}")
        if not col.nullable and not col.cpu_nullable and col.dtype != "str" and len(series) \
                and series.isna().any():
            raise InputError(f"{source}: column {col.name!r} has null values; the schema "
                             "does not allow them")
    if len(frame) and "status" in frame.columns:
        bad = sorted(set(frame["status"].dropna().astype(str)) - set(STATUSES))
        if bad:
            raise InputError(f"{source}: column 'status' holds {', '.join(map(repr, bad))}; "
                             f"allowed are {', '.join(STATUSES)}")
    if table == "counters":
        known = {c.name for c in columns(table)}
        for name in frame.columns:
            if name not in known and not _is_metric(name):
                raise InputError(f"{source}: column {name!r} is neither in the counters schema "
                                 "nor an Nsight Compute metric name")


_PANDAS_TYPES = {"str": "object", "json": "object", "time": "object", "bool": "bool",
                 "float": "float64", "int": "int64"}


def conform(table: str, frame):
    """Cast a freshly built table to the schema's types (missing nullable columns added)."""
    frame = frame.copy()
    for col in columns(table):
        if col.name not in frame.columns:
            if col.nullable or col.cpu_nullable:
                frame[col.name] = None
            elif col.dtype == "str":
                frame[col.name] = ""
        if col.name not in frame.columns:
            continue
        if col.dtype == "int":
            kind = "Int64" if frame[col.name].isna().any() else "int64"
            frame[col.name] = pd.array(frame[col.name], dtype="Int64").astype(kind)
        elif col.dtype == "float":
            frame[col.name] = pd.to_numeric(frame[col.name], errors="coerce").astype("float64")
        elif col.dtype == "bool":
            frame[col.name] = frame[col.name].astype(bool)
        else:
            frame[col.name] = frame[col.name].map(lambda v: "" if v is None else str(v)).astype(object)
    if table == "counters":
        known = {c.name for c in columns(table)}
        for name in frame.columns:
            if name not in known:
                frame[name] = pd.to_numeric(frame[name], errors="coerce").astype("float64")
    return frame


def render_markdown() -> str:
    """``data/SCHEMA.md``: the tables, their columns and the counter metric set."""
    out = [
        "# kerncast datasets: the schema",
        "",
        "Generated from `kerncast.data.schema` by `python tools/write_schema.py`; a test keeps "
        "this file in sync. Do not edit by hand.",
        "",
        "A dataset is a directory of Parquet tables (`times`, `samples`, `counters`, `energy`,",
        "`cpu`). A campaign writes immutable part files `parts/<table>/*.parquet` (written to a",
        "temporary name and renamed, so a killed campaign never leaves a broken file);",
        "`kerncast data compact DIR` merges them into `<table>.parquet`. `Dataset.read` reads",
        "both forms, checks every file against this schema and keeps one row per key (an `ok`",
        "row before a failure, then the latest).",
        "",
        "Every row carries provenance (marked P below). Failures are rows too: `status` says",
        "what happened and `error` says why.",
        "",
        "## Statuses",
        "",
        "| status | meaning |",
        "| --- | --- |",
    ]
    out += [f"| `{s}` | {m} |" for s, m in STATUSES.items()]
    for table, cols in _TABLES.items():
        out += ["", f"## `{table}`", "", f"Key: {', '.join(f'`{k}`' for k in TABLE_KEYS[table])}.",
                "", "| column | type | P | null | meaning |", "| --- | --- | --- | --- | --- |"]
        for c in cols:
            null = "yes" if c.nullable else ("CPU" if c.cpu_nullable else "")
            out.append(f"| `{c.name}` | {c.dtype} | {'P' if c.provenance else ''} | {null} | "
                       f"{c.meaning} |")
    out += ["", "## Counter metrics (`counters`, one float column per metric)", "",
            "Values are in base units: bytes, seconds (Nsight Compute's nanoseconds are",
            "converted), cycles, instructions, per-second rates, and percentages 0-100.",
            "Metrics that the installed Nsight Compute does not know are dropped before",
            "profiling and listed in `metrics_missing`. Derived quantities: replays =",
            "`smsp__inst_issued.sum - smsp__inst_executed.sum`; read/write bandwidth = DRAM",
            "bytes / `gpu__time_duration.sum`.", "",
            "| metric | group | meaning | seed feature |", "| --- | --- | --- | --- |"]
    out += [f"| `{m.name}` | {m.group} | {m.meaning} | {m.seed} |" for m in METRICS]
    return "\n".join(out) + "\n"


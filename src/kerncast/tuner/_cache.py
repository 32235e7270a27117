"""Kernel Tuner's JSON cache files, read and written.

Kernel Tuner (``tune_kernel(..., cache=FILE)``) keeps one JSON object per file::

    {
    "device_name": "NVIDIA RTX A4000",
    "kernel_name": "vector_add",
    "problem_size": 100,                      (optional; int, list or "callable")
    "tune_params_keys": ["block_size_x"],
    "tune_params": {"block_size_x": [128, 192, ...]},
    "objective": "time",                      (optional; Kernel Tuner's default)
    "cache": {
    "128": {"block_size_x": 128, "time": 0.0407, "times": [...], "compile_time": ...},
    "192": {"block_size_x": 192, "time": "CompilationFailedConfig", ...}}
    }

The key of an entry is the configuration's tune-parameter values, each as Python's
``str`` of it, joined by commas in ``tune_params_keys`` order (``"128,alg_2,True"``).
``time`` is in milliseconds. A configuration that could not be measured stores the name
of its failure (``InvalidConfig``, ``CompilationFailedConfig``, ``RuntimeFailedConfig``)
in place of the time; Kernel Tuner 1.x also stores it under ``"__error__"``.

While tuning, Kernel Tuner writes the header up to ``"cache": {`` and appends each
entry as ``\\n"key": {...},``; only at the end does it drop the last comma and close the
file with ``}\\n}``. A run that stopped early leaves the file open; Kernel Tuner reads it
by closing it in memory, and so does :func:`read_cache`.

:func:`write_cache` writes the same layout, closed, with the fields Kernel Tuner's
simulation mode reads (``time``, ``compile_time``, ``verification_time``,
``benchmark_time``; ``times``, ``strategy_time``, ``framework_time`` and ``timestamp``
as a measured run has them), so that ``tune_kernel(..., simulation_mode=True,
cache=FILE)`` and its search strategies run on predicted times.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from kerncast._errors import InputError

__all__ = ["FAILURES", "KTCache", "cache_key", "read_cache", "write_cache"]

#: The failure names Kernel Tuner stores in place of a time.
FAILURES = ("InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig", "ErrorConfig")
_REQUIRED = ("device_name", "kernel_name", "tune_params_keys", "tune_params", "cache")
_OWN_COLUMNS = ("time_ms", "status", "key")
_CLOSING = "}\n}"


@dataclass(frozen=True)
class KTCache:
    """One Kernel Tuner cache file.

    Attributes
    ----------
    kernel_name, device_name
        As Kernel Tuner recorded them.
    problem_size
        An int, a tuple of ints, ``"callable"``, or ``None`` when the file has none.
    tune_params
        Parameter name -> the values tuned over.
    tune_params_keys
        The parameter names in the order the cache keys use.
    objective
        The tuning objective (``"time"`` where the file names none, Kernel Tuner's
        default).
    results
        One row per cached configuration, in file order: one column per tune
        parameter, ``time_ms`` (NaN for a failed configuration), ``status`` (``"ok"`` or
        the failure name) and ``key`` (the cache key).
    closed
        False when Kernel Tuner had not finished writing the file (a stopped run).
    """

    kernel_name: str
    device_name: str
    problem_size: Any
    tune_params: dict[str, list]
    tune_params_keys: list[str]
    objective: Any
    results: pd.DataFrame
    closed: bool = True


def cache_key(values: Sequence[Any]) -> str:
    """The cache key of one configuration, as Kernel Tuner builds it.

    Parameters
    ----------
    values
        The tune-parameter values in ``tune_params_keys`` order.

    Returns
    -------
    str
        Each value's ``str``, joined by commas (NumPy scalars as their Python value).
    """
    return ",".join(str(_plain(v)) for v in values)


# --------------------------------------------------------------------------- reading


def read_cache(path: str | os.PathLike) -> KTCache:
    """Read a cache file that Kernel Tuner (or :func:`write_cache`) wrote.

    Parameters
    ----------
    path
        The JSON cache file; one left open by a stopped tuning run is read as Kernel
        Tuner reads it (the trailing comma dropped, the file closed in memory).

    Returns
    -------
    KTCache

    Raises
    ------
    InputError
        The file cannot be read, is not JSON, or is not a Kernel Tuner cache (a field
        missing or of the wrong type, an entry without its parameters or time); the
        message names the file and the problem.

    Examples
    --------
    >>> cache = read_cache("matmul_A100.json")              # doctest: +SKIP
    >>> cache.results.nsmallest(3, "time_ms")               # doctest: +SKIP
    """
    path = Path(path)
    data, closed = _parse(path, _read_text(path))
    _check_header(path, data)
    keys = list(data["tune_params_keys"])
    rows = [_entry_row(path, key, entry, keys) for key, entry in data["cache"].items()]
    return KTCache(
        kernel_name=data["kernel_name"],
        device_name=data["device_name"],
        problem_size=_problem_size(data.get("problem_size")),
        tune_params={k: list(v) for k, v in data["tune_params"].items()},
        tune_params_keys=keys,
        objective=data.get("objective", "time"),
        results=pd.DataFrame(rows, columns=[*keys, *_OWN_COLUMNS]),
        closed=closed,
    )


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file; give the path of a Kernel Tuner cache "
                         f"file (tune_kernel's cache=)") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory; give the path of a Kernel Tuner "
                         f"cache file (.json)") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text file; a Kernel Tuner cache is UTF-8 "
                         f"JSON") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror}); check the path and "
                         f"its permissions") from None


def _parse(path: Path, text: str) -> tuple[Any, bool]:
    """The decoded JSON and whether the file was closed (see the module docstring)."""
    try:
        return json.loads(text), True
    except ValueError as exc:
        first_error = exc
    body = text.rstrip()
    if body.startswith("{") and not body.endswith(_CLOSING):
        body = body.removesuffix(",") + _CLOSING
        try:
            return json.loads(body), False
        except ValueError:
            pass
    raise InputError(f"{path}: not valid JSON ({first_error}), not even as a cache file "
                     f"that Kernel Tuner left open; if a run was killed while writing, "
                     f"delete the incomplete last entry")


def _check_header(path: Path, data: Any) -> None:
    if not isinstance(data, dict):
        raise InputError(f"{path}: not a Kernel Tuner cache file (the JSON is a "
                         f"{type(data).__name__}, not an object); pass the file that "
                         f"tune_kernel's cache= option wrote")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise InputError(f"{path}: not a Kernel Tuner cache file, it lacks "
                         f"{', '.join(repr(k) for k in missing)}; pass the file that "
                         f"tune_kernel's cache= option wrote")
    _check_types(path, data)
    names, params = data["tune_params_keys"], data["tune_params"]
    if set(names) != set(params) or len(set(names)) != len(names):
        raise InputError(f"{path}: 'tune_params_keys' {names} do not match the names in "
                         f"'tune_params' {list(params)}; the file is damaged")
    clash = [n for n in names if n in _OWN_COLUMNS]
    if clash:
        raise InputError(f"{path}: tune parameter(s) {clash} clash with the columns "
                         f"kerncast adds ({', '.join(_OWN_COLUMNS)}); rename them")


def _check_types(path: Path, data: dict) -> None:
    checks = {
        "device_name": isinstance(data["device_name"], str),
        "kernel_name": isinstance(data["kernel_name"], str),
        "tune_params_keys": isinstance(data["tune_params_keys"], list)
        and all(isinstance(k, str) for k in data["tune_params_keys"]),
        "tune_params": isinstance(data["tune_params"], dict)
        and all(isinstance(v, list) for v in data["tune_params"].values()),
        "cache": isinstance(data["cache"], dict),
    }
    wrong = [k for k, ok in checks.items() if not ok]
    if wrong:
        raise InputError(f"{path}: field(s) {', '.join(repr(k) for k in wrong)} have the "
                         f"wrong type for a Kernel Tuner cache (strings, a list of names, "
                         f"a dict of value lists, a dict of entries); the file is damaged")


def _entry_row(path: Path, key: str, entry: Any, names: list[str]) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise InputError(f"{path}: cache entry {key!r} is a {type(entry).__name__}, not "
                         f"an object; the file is damaged")
    missing = [n for n in names if n not in entry]
    if missing:
        raise InputError(f"{path}: cache entry {key!r} lacks tune parameter(s) "
                         f"{missing}; the file is damaged")
    row = {n: entry[n] for n in names}
    row["time_ms"], row["status"] = _time_and_status(path, key, entry)
    row["key"] = key
    return row


def _time_and_status(path: Path, key: str, entry: dict) -> tuple[float, str]:
    error = entry.get("__error__")
    if isinstance(error, str) and error:
        return math.nan, error
    time = entry.get("time")
    if isinstance(time, str):
        return math.nan, time
    if isinstance(time, (int, float)) and not isinstance(time, bool):
        return float(time), "ok"
    raise InputError(f"{path}: cache entry {key!r} has no 'time' (milliseconds) and no "
                     f"failure name; kerncast reads the 'time' that Kernel Tuner records")


def _problem_size(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


# --------------------------------------------------------------------------- writing


def write_cache(
    path: str | os.PathLike,
    *,
    kernel_name: str,
    device_name: str,
    problem_size: int | Sequence[int] | str,
    tune_params: Mapping[str, Sequence[Any]],
    rows: Sequence[Mapping[str, Any]],
    objective: str = "time",
) -> Path:
    """Write predicted times as a cache file that Kernel Tuner's simulation mode runs on.

    Parameters
    ----------
    path
        Where to write; must end in ``.json`` (Kernel Tuner appends ``.json`` to cache
        names without it). Written atomically: a temporary file in the same directory,
        then renamed over ``path``, so no partial file is ever left.
    kernel_name, device_name, problem_size
        Must equal what ``tune_kernel`` is given (Kernel Tuner checks the kernel name
        and problem size; in simulation mode it takes the device name from the file).
    tune_params
        Parameter name -> values, in the order ``tune_kernel`` gets them (the cache keys
        follow this order).
    rows
        One per configuration: a value for every tune parameter (one of its listed
        values) and either ``time_ms`` (a finite time > 0, milliseconds) or ``status``
        (``"InvalidConfig"``, ``"CompilationFailedConfig"`` or ``"RuntimeFailedConfig"``).
        Other fields (e.g. ``"GFLOP/s"``) are copied into the entry, except ``key`` and
        those kerncast writes itself. The records of :attr:`KTCache.results` are valid
        rows. Simulation mode needs every configuration of the search space.
    objective
        Recorded in the header; an objective other than ``"time"`` must be a field of
        every row with a time.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    InputError
        A bad row or argument (naming the row), or a path that cannot be written.

    Examples
    --------
    >>> write_cache("pred.json", kernel_name="vector_add", device_name="NVIDIA H100",
    ...             problem_size=10_000_000, tune_params={"block_size_x": [128, 256]},
    ...             rows=[{"block_size_x": 128, "time_ms": 0.21},
    ...                   {"block_size_x": 256, "time_ms": 0.19}])   # doctest: +SKIP
    """
    path = Path(path)
    _check_target(path)
    if not isinstance(objective, str) or not objective:
        raise InputError(f"objective must be the name of one result field, such as "
                         f"'time'; got {objective!r}")
    params = _clean_params(tune_params)
    if not rows:
        raise InputError(f"{path}: no rows to write; simulation mode needs a time or a "
                         f"failure for every configuration")
    stamp = str(datetime.now(UTC))
    entries: dict[str, dict[str, Any]] = {}
    for i, row in enumerate(rows):
        key, entry = _entry(i, row, params, objective, stamp)
        if key in entries:
            raise InputError(f"rows[{i}]: configuration {key!r} appears twice; give each "
                             f"configuration once")
        entries[key] = entry
    header = {"device_name": str(device_name), "kernel_name": str(kernel_name),
              "problem_size": _plain(problem_size), "tune_params_keys": list(params),
              "tune_params": params, "objective": objective}
    _write_atomic(path, _layout(header, entries))
    return path


def _check_target(path: Path) -> None:
    if path.suffix != ".json":
        raise InputError(f"{path}: a Kernel Tuner cache file name must end in .json "
                         f"(tune_kernel adds .json to names without it); rename it")
    if path.is_dir():
        raise InputError(f"{path}: is a directory; give a file name ending in .json")
    if not path.parent.is_dir():
        raise InputError(f"{path}: cannot write, {path.parent} is not an existing "
                         f"directory; create it first")


def _clean_params(tune_params: Mapping[str, Sequence[Any]]) -> dict[str, list]:
    if not isinstance(tune_params, Mapping) or not tune_params:
        raise InputError("tune_params must be a non-empty dict of name -> list of values, "
                         "as given to tune_kernel")
    params: dict[str, list] = {}
    for name, values in tune_params.items():
        if not isinstance(name, str) or name in ("time", *_OWN_COLUMNS):
            raise InputError(f"tune parameter name {name!r} is not allowed (names are "
                             f"strings other than time, {', '.join(_OWN_COLUMNS)})")
        if not _is_listlike(values):
            raise InputError(f"tune_params[{name!r}] must be a list of values, got "
                             f"{type(values).__name__}")
        params[name] = [_plain(v) for v in values]
    return params


def _entry(i: int, row: Mapping[str, Any], params: dict[str, list], objective: str,
           stamp: str) -> tuple[str, dict[str, Any]]:
    if not isinstance(row, Mapping):
        raise InputError(f"rows[{i}] is a {type(row).__name__}; each row must be a dict of "
                         f"tune-parameter values and time_ms or status")
    values = [_param_value(i, row, name, allowed) for name, allowed in params.items()]
    entry: dict[str, Any] = dict(zip(params, values, strict=True))
    entry.update(_measurement(i, row, objective))
    for field, value in row.items():
        if field not in params and field not in ("time_ms", "status", "key"):
            entry.setdefault(field, _plain(value))
    entry["timestamp"] = stamp
    return cache_key(values), entry


def _param_value(i: int, row: Mapping[str, Any], name: str, allowed: list) -> Any:
    if name not in row:
        raise InputError(f"rows[{i}]: no value for tune parameter {name!r}; every row "
                         f"needs all of them")
    value = _plain(row[name])
    if not any(type(value) is type(a) and value == a for a in allowed):
        raise InputError(f"rows[{i}]: {name}={value!r} is not one of tune_params[{name!r}] "
                         f"= {allowed}")
    return value


def _measurement(i: int, row: Mapping[str, Any], objective: str) -> dict[str, Any]:
    status = row.get("status", "ok")
    if status != "ok":
        if status not in FAILURES[:3]:
            raise InputError(f"rows[{i}]: status {status!r} is not 'ok' or one of "
                             f"{', '.join(FAILURES[:3])}")
        return {"time": status, "__error__": status, "compile_time": 0.0,
                "verification_time": 0, "benchmark_time": 0.0, "strategy_time": 0,
                "framework_time": 0.0}
    time = _time_ms(i, row)
    if objective != "time" and objective not in row:
        raise InputError(f"rows[{i}]: no value for the objective {objective!r}; add it "
                         f"to every row or use objective='time'")
    return {"time": time, "times": [time], "compile_time": 0.0, "verification_time": 0,
            "benchmark_time": time, "strategy_time": 0, "framework_time": 0.0}


def _time_ms(i: int, row: Mapping[str, Any]) -> float:
    try:
        time = float(row["time_ms"])
    except KeyError:
        raise InputError(f"rows[{i}]: needs 'time_ms' (milliseconds) or a failure "
                         f"'status'") from None
    except (TypeError, ValueError):
        raise InputError(f"rows[{i}]: time_ms={row['time_ms']!r} is not a number") from None
    if not math.isfinite(time) or time <= 0:
        raise InputError(f"rows[{i}]: time_ms={time!r} must be finite and > 0; give a "
                         f"failure 'status' for a configuration without a time")
    return time


def _layout(header: dict[str, Any], entries: dict[str, dict[str, Any]]) -> str:
    """The file text in Kernel Tuner's own layout, closed."""
    try:
        head = json.dumps({**header, "cache": {}}, indent="", allow_nan=False)
        lines = [json.dumps({k: e}, allow_nan=False)[1:-1] for k, e in entries.items()]
    except (TypeError, ValueError) as exc:
        raise InputError(f"cannot write the cache as JSON ({exc}); give plain numbers, "
                         f"strings and booleans (no NaN) as values") from None
    head = head.removesuffix(_CLOSING)  # ends at '"cache": {'
    return head + "\n" + ",\n".join(lines) + _CLOSING + "\n"


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror or exc}); choose a "
                         f"writable location") from None


# --------------------------------------------------------------------------- helpers


def _is_listlike(values: Any) -> bool:
    if isinstance(values, (str, bytes, Mapping)):
        return False
    return isinstance(values, Sequence) or hasattr(values, "tolist")


def _plain(value: Any) -> Any:
    """NumPy scalars and arrays as Python values; lists and tuples as lists."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value

"""What a dataset holds: rows, kernels, sizes, configurations, SM counts, statuses, gaps."""

from __future__ import annotations

from pathlib import Path
from kerncast.data.schema import provenance_columns
from kerncast.data._dataset import Dataset

__all__ = ["empty_provenance", "summarize"]


def _is_empty(series):
    text = series.astype(str).str.strip()
    return series.isna() | text.isin(["", "{}", "nan", "None", "<NA>"])


def empty_provenance(table: str, frame) -> dict[str, int]:
    """Rows with an empty provenance field, per column (only columns with gaps).

    A clock that a CPU device does not have, and the spread of a run that failed
    before it was timed, are not gaps.
    """
    if not len(frame):
        return {}
    on_cpu = frame["device"].astype(str).str.startswith("cpu:") if "device" in frame \
        else False
    failed = frame["status"] != "ok" if "status" in frame else False
    gaps = {}
    for col in provenance_columns(table):
        if col.name not in frame.columns:
            gaps[col.name] = len(frame)
            continue
        empty = _is_empty(frame[col.name])
        if col.cpu_nullable:
            empty &= ~on_cpu
        if col.nullable:
            empty &= ~failed
        if int(empty.sum()):
            gaps[col.name] = int(empty.sum())
    return gaps


def _describe(table: str, frame) -> dict:
    info = {"rows": int(len(frame))}
    if not len(frame):
        return info
    info["status"] = {str(k): int(v) for k, v in frame["status"].value_counts().items()}
    info["kernels"] = sorted(map(str, frame["kernel"].unique()))
    info["sizes"] = sorted(map(str, frame["size"].unique()))
    info["configurations"] = int(frame.groupby(["kernel", "config"]).ngroups)
    info["sm_counts"] = sorted(int(s) for s in frame["sm_count"].unique())
    info["devices"] = sorted(map(str, frame["device"].unique()))
    info["languages"] = sorted(map(str, frame["language"].unique()))
    info["empty_provenance"] = empty_provenance(table, frame)
    return info


def summarize(path: str | Path) -> dict:
    """A JSON-ready description of the dataset at ``path`` (read and checked)."""
    path = Path(path)
    dataset = Dataset.read(path)
    tables = {name: _describe(name, frame) for name, frame in dataset.tables().items()
              if len(frame)}
    kernels = sorted({k for t in tables.values() for k in t.get("kernels", [])})
    gaps = {f"{name}.{col}": n for name, t in tables.items()
            for col, n in t.get("empty_provenance", {}).items()}
    return {"path": str(path), "name": dataset.name, "tables": tables, "kernels": kernels,
            "empty_provenance": gaps, "parts": _count_parts(path)}


def _count_parts(path: Path) -> int:
    parts = path / "parts"
    return sum(1 for _ in parts.glob("*/*.parquet")) if parts.is_dir() else 0

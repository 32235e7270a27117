"""The Dataset: measured tables of one device, read and written as Parquet.

A dataset is a directory (``data/<name>/``) of Parquet tables that share key columns:

``times``     one row per (kernel, language, size, launch configuration, SM count);
              the ground truth that predictors are scored against.
``samples``   sampled partial-grid runs (first k·Psat·N_SM blocks, warm and cold L2).
``counters``  Nsight Compute metrics per (kernel, size, configuration).
``energy``    NVML average power and energy over a timed loop.
``cpu``       single-threaded C versions timed over their region of interest.

Each table is stored compacted (``<table>.parquet``) and/or as immutable part files
(``parts/<table>/*.parquet``) that a running campaign adds; :meth:`Dataset.read` reads
both, checks every file against :mod:`kerncast.data.schema` and keeps one row per key.
Every row carries provenance columns; failures are rows too (``status`` not "ok").
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import pandas as pd

from kerncast._errors import InputError
from kerncast.data import schema
from kerncast.data.schema import TABLE_KEYS

__all__ = ["KEY_COLUMNS", "TABLES", "Dataset", "dedupe", "read_table_files", "table_files"]

TABLES = ("times", "samples", "counters", "energy", "cpu")
# Columns that identify a launch in every table that has them.
KEY_COLUMNS = ("kernel", "language", "size", "config", "device", "sm_count")
PARTS = "parts"


@dataclass
class Dataset:
    """The tables of one measured device (any may be empty)."""

    times: pd.DataFrame = field(default_factory=pd.DataFrame)
    samples: pd.DataFrame = field(default_factory=pd.DataFrame)
    counters: pd.DataFrame = field(default_factory=pd.DataFrame)
    energy: pd.DataFrame = field(default_factory=pd.DataFrame)
    cpu: pd.DataFrame = field(default_factory=pd.DataFrame)
    name: str = ""

    def tables(self) -> dict[str, pd.DataFrame]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name in TABLES}

    def kernels(self) -> list[str]:
        """Kernel names present in ``times``, sorted."""
        return sorted(self.times["kernel"].unique()) if len(self.times) else []

    def subset(self, kernels: list[str] | set[str]) -> Dataset:
        """The same dataset restricted to ``kernels`` in every table (for splits by kernel)."""
        keep = set(kernels)
        cut = {name: (t[t["kernel"].isin(keep)].reset_index(drop=True) if "kernel" in t else t)
               for name, t in self.tables().items()}
        return replace(self, **cut)

    def ok_times(self) -> pd.DataFrame:
        """Rows of ``times`` that measured successfully."""
        t = self.times
        return t[t["status"] == "ok"].reset_index(drop=True) if "status" in t else t

    @classmethod
    def read(cls, path: str | Path, *, validate: bool = True) -> Dataset:
        """Read a dataset directory (compacted tables and part files) or one ``times`` file.

        Parameters
        ----------
        path
            A dataset directory, or a single Parquet file read as the ``times`` table.
        validate
            Check every file against :mod:`kerncast.data.schema` (required columns,
            types, statuses); a problem raises :class:`InputError` naming the file and
            the column.
        """
        path = Path(path)
        if path.is_file():
            return cls(times=read_table_files("times", [path], validate), name=path.stem)
        found = {name: table_files(path, name) for name in TABLES}
        if not any(found.values()):
            raise InputError(f"{path} is not a kerncast dataset: it has no <table>.parquet and "
                             "no parts/; give a directory under data/ (kerncast data summary "
                             "lists them)")
        tables = {name: read_table_files(name, files, validate)
                  for name, files in found.items() if files}
        return cls(**tables, name=path.name)

    def write(self, path: str | Path) -> None:
        """Write every non-empty table as ``<path>/<table>.parquet`` (atomically per file)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        for name, table in self.tables().items():
            if len(table) or name == "times":
                tmp = path / f".{name}.parquet.tmp"
                table.to_parquet(tmp, index=False)
                tmp.replace(path / f"{name}.parquet")


def table_files(root: Path, table: str) -> list[Path]:
    """The compacted file and the part files of ``table`` under ``root``, oldest first."""
    files = []
    compacted = root / f"{table}.parquet"
    if compacted.exists():
        files.append(compacted)
    part_dir = root / PARTS / table
    if part_dir.is_dir():
        files += sorted(p for p in part_dir.glob("*.parquet") if not p.name.startswith("."))
    return files


def read_table_files(table: str, files: list[Path], validate: bool = True) -> pd.DataFrame:
    """Read, check and merge the files of one table into one frame with unique keys."""
    frames = []
    for path in files:
        frame = _read_parquet(path)
        if validate:
            schema.validate(table, frame, str(path))
        if len(frame):
            frames.append(frame)
    if not frames:
        return _read_parquet(files[0]) if files else pd.DataFrame()
    merged = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True, sort=False)
    return dedupe(table, merged)


def dedupe(table: str, frame: pd.DataFrame) -> pd.DataFrame:
    """One row per key: an ``ok`` row before a failure, then the most recent."""
    keys = [k for k in TABLE_KEYS.get(table, KEY_COLUMNS) if k in frame.columns]
    if not len(frame) or not keys:
        return frame.reset_index(drop=True)
    order = pd.DataFrame({
        "failed": (frame["status"] != "ok") if "status" in frame else False,
        "when": frame["measured_at"] if "measured_at" in frame else "",
        "pos": range(len(frame)),
    }, index=frame.index)
    ranked = order.sort_values(["failed", "when", "pos"], ascending=[True, False, False]).index
    kept = frame.loc[ranked].drop_duplicates(subset=keys, keep="first")
    return kept.sort_index().reset_index(drop=True)


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for broken files
        raise InputError(f"cannot read {path} as Parquet ({type(exc).__name__}: {exc}); "
                         "the file is damaged or not a kerncast table") from None

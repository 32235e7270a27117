"""The Dataset: measured tables of one device, read and written as Parquet.

A dataset is a directory (``data/<name>/``) of Parquet tables that share key columns:

``times``     one row per (kernel, language, size, launch configuration, SM count);
              the ground truth that predictors are scored against.
``samples``   sampled partial-grid runs (first k·Psat·N_SM blocks, warm and cold L2).
``counters``  Nsight Compute metrics per (kernel, size, configuration).
``energy``    NVML average power and energy over a timed loop.
``cpu``       single-threaded C versions timed over their region of interest.

Every row carries provenance columns; failures are rows too (``status`` not "ok").
The column-by-column schema lives in ``kerncast.data.schema`` and ``data/SCHEMA.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import pandas as pd

from kerncast._errors import InputError

__all__ = ["KEY_COLUMNS", "TABLES", "Dataset"]

TABLES = ("times", "samples", "counters", "energy", "cpu")
# Columns that identify a launch in every table that has them.
KEY_COLUMNS = ("kernel", "language", "size", "config", "device", "sm_count")


@dataclass
class Dataset:
    """The tables of one measured device (any may be empty but ``times``)."""

    times: pd.DataFrame
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
    def read(cls, path: str | Path) -> Dataset:
        """Read a dataset directory (or a single ``times`` Parquet file)."""
        path = Path(path)
        if path.is_file():
            return cls(times=_read_table(path), name=path.stem)
        if not (path / "times.parquet").exists():
            raise InputError(f"{path} is not a kerncast dataset: it has no times.parquet; "
                             "give a directory under data/ (kerncast data summary lists them)")
        tables = {name: _read_table(path / f"{name}.parquet")
                  for name in TABLES if (path / f"{name}.parquet").exists()}
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


def _read_table(path: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for broken files
        raise InputError(f"cannot read {path} as Parquet ({type(exc).__name__}: {exc}); "
                         "the file is damaged or not a kerncast table") from None

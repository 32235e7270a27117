"""Immutable part files: how a running campaign commits rows without ever breaking a file.

Rows are written to ``parts/<table>/<UTC time>-<host>-<pid>-<seq>.parquet`` through a
hidden temporary file and an atomic rename, so a process killed at any moment leaves
either a complete part or none. :func:`compact` merges the parts of each table into
``<table>.parquet`` (again through a rename) and only then removes the merged parts;
a kill between the two leaves duplicates that :meth:`Dataset.read` drops.
"""

from __future__ import annotations

import itertools
import os
import socket
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from kerncast.data import schema
from kerncast.data._dataset import PARTS, TABLES, read_table_files, table_files

__all__ = ["compact", "write_part"]

_SEQ = itertools.count()


def _part_name() -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
    host = "".join(ch for ch in socket.gethostname() if ch.isalnum() or ch == "-")[:24]
    return f"{stamp}-{host}-{os.getpid()}-{next(_SEQ):05d}.parquet"


def _atomic_parquet(frame, target: Path) -> None:
    tmp = target.with_name(f".{target.name}.tmp")
    frame.to_parquet(tmp, index=False)
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    tmp.replace(target)


def write_part(root: str | Path, table: str, rows) -> Path | None:
    """Commit ``rows`` (dicts or a DataFrame) as one new part file of ``table``.

    The rows are cast to the schema's types and checked against it before anything
    is written. Returns the part's path, or ``None`` when there were no rows.
    """

    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    if not len(frame):
        return None
    frame = schema.conform(table, frame)
    schema.validate(table, frame, f"rows for {table}")
    directory = Path(root) / PARTS / table
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / _part_name()
    _atomic_parquet(frame, target)
    return target


def compact(root: str | Path) -> dict[str, int]:
    """Merge every table's parts into ``<table>.parquet``; return rows per table."""
    root = Path(root)
    counts = {}
    for table in TABLES:
        files = table_files(root, table)
        parts = [f for f in files if f.parent.name == table and f.parent.parent.name == PARTS]
        if not files:
            continue
        merged = read_table_files(table, files, validate=True)
        counts[table] = len(merged)
        if not parts:
            continue
        _atomic_parquet(schema.conform(table, merged), root / f"{table}.parquet")
        for part in parts:
            part.unlink(missing_ok=True)
    return counts

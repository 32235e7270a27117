"""A sweep's journal: every finished configuration's row, appended as it comes, so that an
interrupted sweep run again with the same journal predicts only what is missing.

The file is JSON lines: a header naming the sweep (kernel, device, SM count, size), then
one ``{"key": ..., "row": {...}}`` per configuration. A line cut off by the interruption
is ignored; a journal of another sweep is refused.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from kerncast._errors import InputError

__all__ = ["Journal"]

FORMAT = 1


def _plain(value: Any) -> Any:
    """``value`` as JSON keeps it (an infinite time as the string ``inf``)."""
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return value


def _restored(row: dict) -> dict:
    return {k: (math.inf if v == "inf" else v) for k, v in row.items()}


class Journal:
    """The journal at ``path`` for the sweep ``header`` describes."""

    def __init__(self, path: str | Path, header: dict[str, Any]):
        self.path = Path(path)
        self.header = {"kerncast_sweep": FORMAT, **header}
        self.rows: dict[str, dict] = {}
        if self.path.exists():
            self._read()
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.path.write_text(json.dumps(self.header, default=str) + "\n")
            except OSError as exc:
                raise InputError(f"cannot write the journal {self.path} ({exc.strerror}); "
                                 "choose a file you can write") from None

    def _read(self) -> None:
        try:
            lines = self.path.read_text().splitlines()
        except OSError as exc:
            raise InputError(f"cannot read the journal {self.path} ({exc.strerror})") from None
        try:
            found = json.loads(lines[0]) if lines else {}
        except json.JSONDecodeError:
            found = {}
        if found != json.loads(json.dumps(self.header, default=str)):
            raise InputError(f"{self.path} is not the journal of this sweep (it holds "
                             f"{found or 'no header'}); give a new file, or the journal "
                             "the same sweep wrote")
        for line in lines[1:]:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:  # the line an interruption cut off
                continue
            self.rows[str(entry["key"])] = _restored(entry["row"])

    def add(self, key: str, row: dict) -> None:
        """Append one configuration's row (flushed, so an interruption keeps it)."""
        self.rows[key] = row
        with self.path.open("a") as out:
            out.write(json.dumps({"key": key, "row": {k: _plain(v) for k, v in row.items()}},
                                 default=str) + "\n")

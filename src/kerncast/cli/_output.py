"""Output helpers shared by the commands: Rich tables for people, JSON for scripts."""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from pathlib import Path

from kerncast._errors import InputError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

__all__ = ["console", "err_console", "escape", "new_table", "print_json", "progress", "status",
           "writable_dir", "writable_parent"]

#: On a standard error that is not a terminal (a log file, CI), a progress line at most
#: this often, in seconds.
LOG_EVERY_S = 10.0

#: piped output is read by programs and people alike: no table is cut to 80 columns
_WIDE = 400


class _OnUse:
    """A Rich console made on its first use, so that output for programs (``--json``)
    does not import Rich (about 80 ms of a command's start-up)."""

    def __init__(self, stderr: bool):
        self._stderr = stderr
        self._console: Console | None = None

    def get(self) -> Console:
        """The console itself."""
        if self._console is None:
            from rich.console import Console  # noqa: PLC0415 (on use, see the class)

            stream = sys.stderr if self._stderr else sys.stdout
            self._console = Console(stderr=self._stderr, highlight=False, soft_wrap=True,
                                    width=None if stream.isatty() else _WIDE)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.get(), name)


console: Any = _OnUse(stderr=False)
err_console: Any = _OnUse(stderr=True)


def escape(text: str) -> str:
    """``text`` with Rich's markup escaped."""
    from rich.markup import escape as rich_escape  # noqa: PLC0415 (on use, see _OnUse)

    return rich_escape(text)


def new_table(**options: Any) -> Table:
    """A Rich table (``options`` as ``rich.table.Table`` takes them)."""
    from rich.table import Table  # noqa: PLC0415 (on use, see _OnUse)

    return Table(**options)


def status(text: str, quiet: bool) -> Any:
    """A spinner saying ``text`` (its ``update`` reports progress), or none for ``--json``."""
    return nullcontext() if quiet else console.status(text, spinner="dots")


Report = Callable[[int, int, str], None]


@contextmanager
def progress(what: str, quiet: bool = False) -> Iterator[Report]:
    """Progress of long work as ``report(done, total, label)``: a bar on a terminal, a
    line at most every :data:`LOG_EVERY_S` seconds and one at the end where standard
    error is a file or a pipe, nothing when ``quiet`` (``--json``)."""
    if quiet:
        yield lambda done, total, label: None
    elif err_console.is_terminal:
        with _bar(what) as report:
            yield report
    else:
        log = _Lines(what)
        yield log.report
        log.close()


@contextmanager
def _bar(what: str) -> Iterator[Report]:
    from rich.progress import (  # noqa: PLC0415 (only where a terminal shows it)
        BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
    )

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err_console.get()) as bar:
        task = bar.add_task(what, total=None)
        yield lambda done, total, label: bar.update(task, completed=done, total=total,
                                                    description=(label or what)[:60])


class _Lines:
    """Progress as plain lines on standard error, for logs."""

    def __init__(self, what: str):
        self.what, self.started, self.last = what, time.monotonic(), -LOG_EVERY_S
        self.state: tuple[int, int, str] | None = None

    def report(self, done: int, total: int, label: str) -> None:
        self.state = (done, total, label)
        now = time.monotonic()
        if now - self.last >= LOG_EVERY_S:
            self._write(now)

    def close(self) -> None:
        if self.state is not None:
            self._write(time.monotonic())

    def _write(self, now: float) -> None:
        assert self.state is not None
        done, total, label = self.state
        self.last = now
        of = f"/{total}" if total else ""
        why = f" ({label})" if label and label != self.what else ""
        sys.stderr.write(f"{self.what}: {done}{of} after {now - self.started:.0f} s{why}\n")
        sys.stderr.flush()


def writable_dir(path: Path) -> Path:
    """``path`` as a directory that exists and can be written, made where missing; checked
    before long work, so that a command does not fail at its end."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".kerncast-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise InputError(f"cannot write into {path} ({exc.strerror or exc}); choose a "
                         "directory you can write") from None
    return path


def writable_parent(path: Path) -> Path:
    """``path``, once its directory exists and can be written (see :func:`writable_dir`)."""
    writable_dir(path.parent)
    if path.is_dir():
        raise InputError(f"{path} is a directory; name a file to write")
    return path


def _default(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "item"):  # NumPy scalars
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def print_json(obj: Any) -> None:
    """Write ``obj`` as indented JSON to standard output (NaN and inf become null)."""
    text = json.dumps(_clean(json.loads(json.dumps(obj, default=_default))), indent=2)
    sys.stdout.write(text + "\n")

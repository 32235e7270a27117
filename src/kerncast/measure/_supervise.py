"""Running a measuring child process and turning its fate into rows.

:func:`run_worker` starts ``python -m kerncast.measure._worker`` on a list of items,
reads its event lines (see :mod:`kerncast.measure._worker`), hands each finished
item's rows to a callback, and enforces the item timeout and the campaign's hard
deadline. It returns what happened to the item in flight, if any, so that the
caller can write its failure row and start a new child for the rest.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kerncast._errors import ToolchainError

__all__ = ["STARTUP_TIMEOUT", "WorkerOutcome", "run_worker"]

STARTUP_TIMEOUT = 120.0  # seconds a new child may take before its first item starts


@dataclass
class WorkerOutcome:
    """What one child did."""

    finished: set[int] = field(default_factory=set)
    failed: dict[int, tuple[str, str]] = field(default_factory=dict)  # id -> (status, error)
    in_flight: int | None = None
    stopped: bool = False          # the child stopped at the deadline
    killed_at_deadline: bool = False
    returncode: int | None = None
    stderr_tail: str = ""
    describe: dict = field(default_factory=dict)
    seconds: dict[int, float] = field(default_factory=dict)  # id -> the item's wall time


def _env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in [src, env.get("PYTHONPATH", "")] if p)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _tail(path: Path, limit: int = 6000) -> str:
    try:
        return path.read_text(errors="replace")[-limit:].strip()
    except OSError:
        return ""


class _Reader:
    """Line reader over a pipe with timeouts."""

    def __init__(self, stream):
        self.stream = stream
        self.sel = selectors.DefaultSelector()
        self.sel.register(stream, selectors.EVENT_READ)
        self.buffer = b""

    def lines(self, timeout: float) -> list[str] | None:
        """Complete lines available within ``timeout`` ([] on timeout, None at EOF)."""
        if b"\n" not in self.buffer:
            if not self.sel.select(timeout):
                return []
            chunk = os.read(self.stream.fileno(), 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk
        *complete, self.buffer = self.buffer.split(b"\n")
        return [c.decode(errors="replace") for c in complete]


def _handle(line: str, out: WorkerOutcome, state: dict, on_rows: Callable) -> None:
    tag, _, payload = line.partition(" ")
    if tag == "KC:START":
        state["current"], state["since"] = int(payload), time.monotonic()
        state["rows"] = []
    elif tag == "KC:ROW":
        table, _, body = payload.partition(" ")
        state["rows"].append((table, json.loads(body)))
    elif tag == "KC:DONE":
        item, _, seconds = payload.partition(" ")
        if seconds:
            out.seconds[int(item)] = float(seconds)
        on_rows(int(item), state["rows"])
        out.finished.add(int(item))
        state["current"], state["rows"], state["since"] = None, [], time.monotonic()
    elif tag == "KC:FAILED":
        info = json.loads(payload)
        out.failed[int(info["id"])] = ("crash", info.get("error", ""))
        out.finished.add(int(info["id"]))
        state["current"], state["since"] = None, time.monotonic()
    elif tag == "KC:READY":
        out.describe = json.loads(payload)
    elif tag == "KC:STOPPED":
        out.stopped = True
    elif tag == "KC:FATAL":
        raise ToolchainError(payload.strip())


def run_worker(job: dict, on_rows: Callable[[int, list], None], item_timeout: float,
               hard_deadline: float | None) -> WorkerOutcome:
    """Run one child on ``job`` (monotonic ``hard_deadline``); see :class:`WorkerOutcome`."""
    out = WorkerOutcome()
    with tempfile.TemporaryDirectory(prefix="kerncast-worker-") as tmp:
        job_path, err_path = Path(tmp) / "job.json", Path(tmp) / "stderr.log"
        job_path.write_text(json.dumps(job))
        with open(err_path, "wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", "kerncast.measure._worker", str(job_path)],
                                    stdout=subprocess.PIPE, stderr=err, env=_env(),
                                    start_new_session=True)
        reader = _Reader(proc.stdout)
        state: dict = {"current": None, "since": time.monotonic(), "rows": []}
        try:
            while True:
                now = time.monotonic()
                if hard_deadline is not None and now >= hard_deadline:
                    out.killed_at_deadline, out.in_flight = True, state["current"]
                    _kill(proc)
                    break
                # an item's clock starts at KC:START; starting the child gets more time
                limit = item_timeout if state["current"] is not None else \
                    max(item_timeout, STARTUP_TIMEOUT)
                if now - state["since"] > limit:
                    out.in_flight = state["current"]
                    out.failed[-1 if out.in_flight is None else out.in_flight] = (
                        "timeout", f"no result within {limit:g} s; the process was killed")
                    _kill(proc)
                    break
                wait = min(1.0, max(0.01, limit - (now - state["since"])))
                lines = reader.lines(wait)
                if lines is None:
                    proc.wait()
                    out.in_flight = state["current"]
                    break
                for line in lines:
                    if line.startswith("KC:"):
                        _handle(line, out, state, on_rows)
        except BaseException:
            _kill(proc)
            raise
        finally:
            proc.stdout.close()
        out.returncode = proc.returncode
        out.stderr_tail = _tail(err_path)
    return out

"""XAPP's features of the corpus's C regions: the training side of the speedup model.

Every corpus kernel has a single-threaded C version whose region of interest is bounded
by ``KC_ROI_BEGIN``/``KC_ROI_END``; each is profiled on its default launch's data at
each size. The table is written after every row (atomically), so an interrupted build
resumes where it stopped; a region that fails is a row with its status and error.
"""

from __future__ import annotations

import platform
import socket
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from kerncast._errors import KerncastError
from kerncast.corpus import INCLUDE_DIR, CorpusKernel, get_kernel, list_kernels, write_run_dir
from kerncast.cpu._features import FEATURES
from kerncast.cpu._profile import DEFAULT_PERIOD, Program, build_program, profile_program

__all__ = ["LARGE_MAX_OPS", "SIZES", "build_features"]

SIZES = ("small", "medium", "large")
#: Regions longer than this many operations are profiled on their prefix (``truncated``):
#: the largest corpus regions run for minutes natively.
LARGE_MAX_OPS = 1 << 31
#: Only regions this short are also timed natively (the profiler's slowdown).
NATIVE_SIZES = ("small", "medium")


def _clang_version() -> str:
    out = subprocess.run(["clang-14", "--version"], capture_output=True, text=True).stdout
    return out.splitlines()[0].strip() if out else ""


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _provenance() -> dict[str, object]:
    import kerncast  # noqa: PLC0415 (the package's version; kerncast imports this module lazily)

    return {"hostname": socket.gethostname(), "cpu": _cpu_model(), "compiler": _clang_version(),
            "kerncast_version": kerncast.__version__}


def _profile_one(kernel: CorpusKernel, size: str, program: Program, period: int, max_ops: int,
                 workdir: Path) -> dict[str, object]:
    config = kernel.launch(size)
    row: dict[str, object] = {"kernel": kernel.name, "size": size, "config": config.label(),
                              "status": "ok", "error": ""}
    with tempfile.TemporaryDirectory(dir=workdir) as run:
        write_run_dir(kernel, config, Path(run))
        try:
            prof = profile_program(program, None, [kernel.name, run], period=period, max_ops=max_ops,
                                   native=size in NATIVE_SIZES)
        except KerncastError as exc:
            return {**row, "status": "failed", "error": str(exc)[:2000]}
    return {**row, **prof.row()}


def build_features(out: Path, kernels: Sequence[str] | None = None, sizes: Sequence[str] = SIZES, *,
                   period: int = DEFAULT_PERIOD, max_ops: int = LARGE_MAX_OPS,
                   on_row: Callable[[dict[str, object], int, int], None] | None = None) -> pd.DataFrame:
    """Profile the corpus's C regions into ``out`` (Parquet), skipping rows already there."""
    chosen = [get_kernel(k) for k in kernels] if kernels else list_kernels()
    done = pd.read_parquet(out) if out.exists() else pd.DataFrame(columns=["kernel", "size", "status"])
    have = {(r.kernel, r.size) for r in done.itertuples() if r.status == "ok"}
    todo = [(k, s) for k in chosen for s in sizes if (k.name, s) not in have]
    common = _provenance()
    rows = [r for r in done.to_dict("records") if (r["kernel"], r["size"]) in have]
    programs: dict[str, Program] = {}
    with tempfile.TemporaryDirectory(prefix="kerncast-xapp-corpus-") as tmp:
        for n, (kernel, size) in enumerate(todo, 1):
            app = kernel.app.name
            if app not in programs:
                build = Path(tmp, app)
                build.mkdir()
                programs[app] = build_program([kernel.c_path], build, None, include_dirs=[INCLUDE_DIR])
            row = {**_profile_one(kernel, size, programs[app], period, max_ops, Path(tmp)), **common,
                   "period": period, "max_ops": max_ops,
                   "profiled_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
            rows.append(row)
            _write(rows, out)
            if on_row is not None:
                on_row(row, n, len(todo))
    return _frame(rows)


def _frame(rows: list[dict[str, object]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    first = ["kernel", "size", "config", "status", "error", *FEATURES]
    return frame[[c for c in first if c in frame] + [c for c in frame if c not in first]]


def _write(rows: list[dict[str, object]], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    _frame(rows).sort_values(["kernel", "size"]).to_parquet(tmp, index=False)
    tmp.replace(out)

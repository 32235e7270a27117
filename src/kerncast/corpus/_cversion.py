"""Build and run the single-threaded C versions of corpus kernels.

The C version of an application is one program, ``<app>.c``, built with gcc against
``include/kc_harness.h``. kerncast writes a launch's arguments and the reference
outputs to a directory, runs ``<program> KERNEL DIR``, and reads back the time of
the region of interest and whether the outputs matched.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kerncast._errors import KerncastError, ToolchainError
from kerncast.corpus._data import expected_outputs, make_args
from kerncast.corpus._spec import Application, CorpusKernel, LaunchConfig

__all__ = ["CResult", "build_c", "run_c", "write_run_dir"]

INCLUDE_DIR = Path(__file__).with_name("include")
CFLAGS = ["-O2", "-std=c11"]
_LINE = re.compile(r"kerncast-c: kernel=(\S+) roi_seconds=([0-9.eE+-]+) status=(\w+)")


@dataclass(frozen=True)
class CResult:
    kernel: str
    roi_seconds: float
    ok: bool
    message: str


def _cache_dir() -> Path:
    root = Path(os.environ.get("KERNCAST_CACHE", Path.home() / ".cache" / "kerncast"))
    path = root / "cbuild"
    path.mkdir(parents=True, exist_ok=True)
    return path


def build_c(app: Application, flags: list[str] | None = None) -> Path:
    """Compile ``<app>.c`` (cached by source, header and flags); return the program."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        raise ToolchainError("no C compiler found; install gcc (apt-get install gcc)")
    source = app.directory / f"{app.name}.c"
    flags = CFLAGS if flags is None else flags
    digest = hashlib.sha256(source.read_bytes() + (INCLUDE_DIR / "kc_harness.h").read_bytes()
                            + " ".join(flags).encode()).hexdigest()[:16]
    program = _cache_dir() / f"{app.name}-{digest}"
    if program.exists():
        return program
    tmp = program.with_suffix(".tmp")
    cmd = [gcc, *flags, "-I", str(INCLUDE_DIR), str(source), "-o", str(tmp), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise KerncastError(f"the C version {source.name} does not build:\n{proc.stderr.strip()}")
    tmp.replace(program)
    return program


def write_run_dir(kernel: CorpusKernel, config: LaunchConfig, directory: Path, seed: int = 0) -> None:
    """Write a launch's arguments and reference outputs in the harness's format."""
    args = make_args(kernel, config, seed)
    want = expected_outputs(kernel, args, config)
    lines = []
    for arg in kernel.spec.args:
        value = args[arg.name]
        if arg.kind == "scalar":
            lines.append(f"{arg.name} scalar {arg.dtype} {value.item()!r} -")
            continue
        lines.append(f"{arg.name} buffer {arg.dtype} {value.size} {arg.intent}")
        if arg.intent != "out":
            value.tofile(directory / f"{arg.name}.bin")
    for name, expected in want.items():
        dtype = next(a.dtype for a in kernel.spec.args if a.name == name)
        np.asarray(expected, dtype=dtype).tofile(directory / f"{name}.expected.bin")
    (directory / "args.txt").write_text("\n".join(lines) + "\n")
    check = kernel.spec.check
    # The C version computes in the same precision as the kernel, in another order.
    (directory / "check.txt").write_text(f"{max(check.rtol, 1e-5)!r} {max(check.atol, 0.0)!r}\n")


def run_c(kernel: CorpusKernel, config: LaunchConfig, seed: int = 0, timeout: float = 600) -> CResult:
    """Run the C version of ``kernel`` on one launch's data; time its region of interest."""
    program = build_c(kernel.app)
    with tempfile.TemporaryDirectory(prefix="kerncast-c-") as tmp:
        write_run_dir(kernel, config, Path(tmp), seed)
        try:
            proc = subprocess.run([str(program), kernel.name, tmp], capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return CResult(kernel.name, float("nan"), False, f"timed out after {timeout} s")
    match = _LINE.search(proc.stdout)
    if match is None:
        message = (proc.stderr or proc.stdout).strip() or f"exit code {proc.returncode}"
        return CResult(kernel.name, float("nan"), False, message)
    ok = match.group(3) == "ok" and proc.returncode == 0
    return CResult(kernel.name, float(match.group(2)), ok, proc.stderr.strip())

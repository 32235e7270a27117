"""A new interpreter with this checkout's kerncast, for what only a fresh process shows:
which modules an import or a command loads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import kerncast


def fresh_python(code: str) -> str:
    """What ``code`` prints in a new interpreter (stripped)."""
    src = str(Path(kerncast.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    return out.stdout.strip()


def modules_after(argv: list[str]) -> set[str]:
    """The modules loaded once ``kerncast ARGV`` has run (its output discarded) in a new
    interpreter; the command must succeed."""
    code = (
        "import contextlib, io, sys\n"
        "from kerncast.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main({argv!r}) == 0\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    return set(fresh_python(code).splitlines())

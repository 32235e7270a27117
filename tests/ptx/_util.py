"""Helpers for the PTX tests: the committed inputs and a wrapper to build small modules."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

DATA = Path(__file__).with_name("data")
PTX_FILES = sorted(DATA.glob("*.ptx"))
HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"


def kernel(body: str, params: str = ".param .u32 n", name: str = "k", extra: str = "") -> str:
    """PTX text of a module with one kernel ``name`` whose body is ``body``."""
    return f"{HEADER}{extra}\n.visible .entry {name}({params})\n{{\n{body}\n}}\n"


def ptxas_accepts(text: str, tmp_path: Path, arch: str = "sm_90") -> subprocess.CompletedProcess:
    """Run ptxas on ``text``; the test is skipped where ptxas is not installed."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not installed")
    path = tmp_path / "module.ptx"
    path.write_text(text)
    return subprocess.run([ptxas, f"-arch={arch}", str(path), "-o", str(tmp_path / "out.cubin")],
                          capture_output=True, text=True, timeout=120)

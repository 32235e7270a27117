"""The disk cache under predictions: shared by processes predicting at once, and rebuilt
where an entry is damaged (PTX, resources, SASS, register-bank conflicts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.toolchain

ROOT = Path(__file__).resolve().parents[2]
ARGV = [sys.executable, "-m", "kerncast", "predict", "corpus:matmul_tiled", "--size", "small",
        "--json"]


def _env(cache: Path) -> dict:
    return {**os.environ, "KERNCAST_CACHE": str(cache),
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}


def _seconds(proc: subprocess.CompletedProcess) -> float:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["seconds"]


def test_two_processes_share_the_cache_and_a_damaged_one_is_rebuilt(tmp_path):
    cache = tmp_path / "cache"
    running = [subprocess.Popen(ARGV, env=_env(cache), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in running]
    first = [_seconds(subprocess.CompletedProcess(ARGV, p.returncode, o, e))
             for p, (o, e) in zip(running, outs)]
    assert first[0] == first[1]
    entries = sorted(cache.rglob("*.json"))
    assert entries and not [p for p in cache.rglob("*") if p.name.startswith(".tmp-")]
    for i, entry in enumerate(entries):  # every entry damaged, one way or another
        data = entry.read_bytes()
        entry.write_bytes(data[: len(data) // 2] if i % 2 else b"{not json")
    again = subprocess.run(ARGV, env=_env(cache), capture_output=True, text=True, timeout=300)
    assert _seconds(again) == first[0]
    assert all(json.loads(p.read_text()) for p in cache.rglob("*.json"))  # rewritten whole

"""Shared fixtures of the measurement tests: the faulty test corpus, PYTHONPATH for children."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAULTY = Path(__file__).with_name("corpus")


@pytest.fixture
def child_env(monkeypatch):
    """Child processes import kerncast from src/ and the fakes from tests/."""
    paths = [str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    return monkeypatch

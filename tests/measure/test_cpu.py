"""The ``cpu`` experiment's repetitions (the C program itself is faked)."""

from __future__ import annotations

import pytest

from kerncast.corpus import get_kernel
from kerncast.measure import _cpu


@pytest.fixture
def fake_program(monkeypatch):
    """Runs of the C version that take the given seconds each."""
    calls: list[float] = []

    def install(seconds: float) -> list[float]:
        monkeypatch.setattr(_cpu, "build_c", lambda app: "program")
        monkeypatch.setattr(_cpu, "write_run_dir", lambda *a, **k: None)

        def run(program, kernel, directory, timeout):
            calls.append(seconds)
            return seconds, "ok", ""

        monkeypatch.setattr(_cpu, "_run", run)
        return calls

    return install


def _row():
    kernel = get_kernel("copy_vector")
    return _cpu.measure_c(kernel, kernel.launch("small"), reps=3)


def test_short_runs_are_repeated(fake_program):
    calls = fake_program(0.5)
    row = _row()
    assert len(calls) == 3 and row["repetitions"] == 3 and row["status"] == "ok"


def test_long_runs_stop_once_they_add_up(fake_program):
    calls = fake_program(40.0)  # 40 + 40 >= LONG_RUNS_S: two runs, not three
    row = _row()
    assert len(calls) == 2 and row["repetitions"] == 2
    assert row["time_median_s"] == pytest.approx(40.0)

"""Progress of long work: a bar on a terminal, plain lines in a log, nothing for --json."""

from __future__ import annotations

from kerncast.cli import _output


def test_progress_in_a_log_is_a_line_now_and_then_and_one_at_the_end(capsys, monkeypatch):
    assert not _output.err_console.is_terminal  # captured: a log, as far as it knows
    clock = iter([0.0, 0.0, 1.0, 12.0, 13.0, 13.0])
    monkeypatch.setattr(_output.time, "monotonic", lambda: next(clock))
    with _output.progress("evaluating") as report:
        for done in range(1, 5):
            report(done, 4, "fold 2")
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["evaluating: 1/4 after 0 s (fold 2)", "evaluating: 3/4 after 12 s (fold 2)",
                     "evaluating: 4/4 after 13 s (fold 2)"]


def test_quiet_progress_says_nothing(capsys):
    with _output.progress("measuring", quiet=True) as report:
        report(1, 2, "x")
    assert capsys.readouterr().err == ""

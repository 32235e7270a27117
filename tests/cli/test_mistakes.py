"""User mistakes on the command line: each exits 2 (or 1 for a missing tool) with a message
naming what was wrong and what to do, no traceback, no partial file; with ``--json``
every error is a JSON object."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kerncast.cli import main

pytestmark = pytest.mark.toolchain


def _run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, message", [
    (["predict", "corpus:copy_vector", "--size", "small", "--sm-count", "0"],
     "sm_count 0 is not an SM count of h100-sxm; give 1 to 132"),
    (["predict", "corpus:copy_vector", "--size", "small", "--sm-count", "-5"],
     "sm_count -5 is not an SM count"),
    (["predict", "corpus:copy_vector", "--size", "small", "--sm-count", "100000"],
     "give 1 to 132"),
    (["sweep", "corpus:copy_vector", "--device", "nosuch"], "nosuch"),
    (["predict", "corpus:copy_vector", "--model", "nope"], "unknown model 'nope'"),
    (["predict", "corpus:copy_vector", "--budget", "0.5"], "takes no budget"),
])
def test_bad_input_is_exit_2_with_its_reason(capsys, argv, message):
    code, out, err = _run(capsys, argv)
    assert code == 2 and message in " ".join(err.split()) and "Traceback" not in err


def test_with_json_an_error_is_a_json_object(capsys):
    code, out, err = _run(capsys, ["predict", "corpus:copy_vector", "--model", "nope", "--json"])
    assert code == 2
    error = json.loads(out)
    assert error["error"].startswith("unknown model 'nope'") and error["exit_code"] == 2
    assert error["hint"].startswith("the known models are")


@pytest.mark.parametrize("option", ["--csv", "--cache"])
def test_an_output_that_cannot_be_written_fails_before_the_work(tmp_path, capsys, option):
    main(["new", str(tmp_path / "m")])
    capsys.readouterr()
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, out, err = _run(capsys, ["sweep", str(tmp_path / "m" / "launch.toml"), option,
                                   str(blocker / "x.out")])
    assert code == 2 and "cannot write into" in err and not out


def test_train_and_report_refuse_an_unwritable_output_before_fitting(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    data = str(Path(__file__).resolve().parents[2] / "data" / "pocl-2core")
    code, _, err = _run(capsys, ["train", "launch-regression", "--dataset", data, "--out",
                                 str(blocker / "m.json")])
    assert code == 2 and "cannot write into" in err
    code, _, err = _run(capsys, ["report", "--dataset", data, "--models", "roofline", "--out",
                                 str(blocker / "r")])
    assert code == 2 and "cannot write into" in err
    assert blocker.read_text() == ""  # nothing written where it could not go


def test_train_counts_the_kernels_it_was_trained_on(tmp_path, capsys):
    data = str(Path(__file__).resolve().parents[2] / "data" / "pocl-2core")
    code, out, err = _run(capsys, ["train", "launch-regression", "--dataset", data, "--out",
                                   str(tmp_path / "m.json"), "--json"])
    assert code == 0, err
    assert json.loads(out)["kernels"] > 0


def test_piped_tables_cut_no_name():
    proc = subprocess.run([sys.executable, "-m", "kerncast", "devices"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and "…" not in proc.stdout
    assert "radeon-hd-6970" in proc.stdout

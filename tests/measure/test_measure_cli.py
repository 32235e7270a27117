"""``kerncast measure KERNEL``: tables, JSON, and clear messages for every mistake."""

import json
import sys

import pytest

from kerncast.cli import main

FAKE = "tests.measure.fakes:FakeBackend"


def test_pocl_measures_one_kernel(capsys, pocl):
    code = main(["measure", "corpus:matmul_tiled", "--device", "cpu", "--backend", "pocl",
                 "--config", "tile=8", "--json"])
    assert code == 0
    row = json.loads(capsys.readouterr().out)
    assert row["status"] == "ok" and row["config"] == "pad=0,tile=8" and row["backend"] == "pocl"
    assert row["time_median_s"] > 0 and row["sm_clock_mhz_before"] > 0


def test_table_output_for_people(capsys):
    assert main(["measure", "matmul_naive", "--device", "h100", "--backend", FAKE]) == 0
    out = capsys.readouterr().out
    assert "matmul_naive (cuda) size small bx=16,by=16 on h100-sxm (132 SMs, fake)" in out
    assert "ok" in out


def test_no_cupy_is_one_line_naming_the_alternatives(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "cupy", None)
    assert main(["measure", "corpus:matmul_naive", "--device", "h100"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: CuPy is not installed") and "--backend pocl" in err
    assert "--backend replay" in err and len(err.splitlines()) == 1


def test_unknown_device_is_bad_input(capsys):
    assert main(["measure", "matmul_naive", "--device", "h900"]) == 2
    assert "h900" in capsys.readouterr().err


def test_pocl_is_for_the_cpu(capsys):
    assert main(["measure", "matmul_naive", "--device", "h100", "--backend", "pocl"]) == 2
    assert "pass --device cpu" in capsys.readouterr().err


def test_config_must_be_name_equals_value(capsys):
    assert main(["measure", "matmul_naive", "--device", "h100", "--backend", FAKE,
                 "--config", "bx"]) == 2
    assert "--config 'bx' is not NAME=VALUE" in capsys.readouterr().err


def test_size_that_does_not_fit_is_a_failure_row(monkeypatch, capsys):
    monkeypatch.setenv("KC_FAKE_MEMORY", str(1 << 20))
    assert main(["measure", "matmul_naive", "--device", "h100", "--backend", FAKE,
                 "--size", "medium", "--json"]) == 1
    row = json.loads(capsys.readouterr().out)
    assert row["status"] == "too_large" and "measure a smaller size" in row["error"]


def test_wrong_output_is_reported(monkeypatch, capsys):
    monkeypatch.setenv("KC_FAKE", json.dumps({"matmul_naive": "wrong"}))
    assert main(["measure", "matmul_naive", "--device", "h100", "--backend", FAKE]) == 1
    assert "wrong_output: c: 2304 of 2304 elements differ, first at [0]" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["measure", "corpus", "--device", "h100"], "needs --out DIR"),
    (["measure", "corpus", "--device", "h100", "--out", "x", "--experiments", "speed"],
     "unknown experiment(s) speed"),
])
def test_campaign_arguments_are_checked(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv + ["--backend", FAKE]) == 2
    assert message in capsys.readouterr().err

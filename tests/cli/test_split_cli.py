"""``kerncast split``: the table and JSON of a split, and bad input as exit code 2."""

from __future__ import annotations

import json

import pytest

from kerncast.cli import main

pytestmark = pytest.mark.toolchain  # compiles kernels

DEVICES = "tests.split.fakes:fast,tests.split.fakes:slow"
SCALE = ["split", "tests/userkernels/saxpy.cu", "--kernel", "saxpy", "--grid", "64",
         "--block", "32", "--arg", "n=int32:2048", "--arg", "a=float32:2", "--arg",
         "x=float32[n]:uniform(-1,1)", "--arg", "y=float32[n]"]


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_split_prints_each_devices_part_and_the_check(capsys):
    code, out, err = _run(capsys, [*SCALE, "--devices", DEVICES])
    assert code == 0, err
    assert "each device's part" in out and "outputs match" in out and "emulated" in out


def test_split_says_when_the_fastest_ran_alone_without_samples(capsys):
    code, out, err = _run(capsys, [*SCALE, "--devices",
                                   "tests.split.fakes:fast,tests.split.fakes:cpu"])
    assert code == 0, err
    flat = " ".join(out.split())
    assert "alone, in one launch" in flat and "no samples taken" in flat
    assert "run again" not in flat


def test_split_json_with_baselines(capsys):
    code, out, err = _run(capsys, [*SCALE, "--devices", DEVICES, "--baselines", "--json"])
    assert code == 0, err
    result = json.loads(out)
    assert sum(p["slices"] + p["sampled_slices"] for p in result["parts"]) == 64
    assert {"equal", "oracle", "kerncast (warm)"} <= set(result["baselines"])


@pytest.mark.parametrize(("devices", "message"), [
    ("tests.split.fakes:fast", "give at least two"),
    ("cupy:x,pocl", "give the GPU's index"),
    ("nosuch,pocl", "nosuch"),
])
def test_split_mistakes_exit_2(capsys, devices, message):
    code, _, err = _run(capsys, [*SCALE, "--devices", devices])
    assert code == 2 and message in err, err

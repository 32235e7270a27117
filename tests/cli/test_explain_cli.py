"""``kerncast explain``: the what-if table, the chart, JSON, and bad input as exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kerncast.cli import main

pytestmark = pytest.mark.toolchain  # compiles corpus kernels

DATA = Path(__file__).resolve().parents[2] / "data" / "h100"
BANKS = ["explain", "corpus:smem_bank_stride", "--size", "small", "-c", "stride=32"]


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_explain_shows_the_gain_of_each_fix_and_writes_the_chart(capsys, tmp_path):
    chart = tmp_path / "banks.png"
    code, out, err = _run(capsys, [*BANKS, "--plot", str(chart)])
    assert code == 0, err
    assert "bottleneck:" in out and "what if" in out and "bank-conflicts" in out
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_explain_json_with_one_fix_and_the_variable_importance(capsys):
    code, out, err = _run(capsys, [*BANKS, "--fix", "bank-conflicts", "--importance",
                                   str(DATA), "--json"])
    assert code == 0, err
    result = json.loads(out)
    assert list(result["gains"]) == ["bank-conflicts"] and result["gains"]["bank-conflicts"] > 1
    assert result["importance"]["gpu-random-forest"]
    assert {"flops", "dram_bytes", "peak_bandwidth"} <= set(result["roofline"])


@pytest.mark.parametrize(("extra", "message"), [
    (["--fix", "padding"], "unknown what-if fix padding"),
    (["--plot", "chart.svg"], "written as PNG"),
    (["--importance", "no/such/dir"], "no/such/dir"),
])
def test_explain_mistakes_exit_2(capsys, extra, message):
    code, _, err = _run(capsys, [*BANKS, *extra])
    assert code == 2 and message in err, err

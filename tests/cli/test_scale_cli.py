"""``kerncast scale`` end to end on the shipped data, and the mistakes a user makes (exit 2,
a message saying what to do)."""

from __future__ import annotations

import json

import pytest

from kerncast.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_scale_predicts_targets_with_measurements_and_a_plot(capsys, tmp_path):
    plot = tmp_path / "surface.png"
    code, out, err = _run(capsys, ["scale", "corpus:matmul_tiled", "--base", "h100:132",
                                   "--to", "h200:64,h100:32", "--plot", str(plot), "--json"])
    assert code == 0, err
    answer = json.loads(out)
    assert answer["kernel"] == "matmul_tiled" and answer["base"] == "h100:132"
    assert answer["trained_on"] == 57  # every kernel but the one predicted
    got = {(t["device"], t["sm_count"]): t for t in answer["targets"]}
    assert set(got) == {("h200", 64), ("h100-sxm", 32)}
    for target in got.values():
        assert target["time_s"] > 0 and target["power_w"] > 0
        assert target["measured_time_s"] > 0
        assert abs(target["error_time_s_pct"]) < 100
    assert plot.stat().st_size > 0


def test_scale_from_a_reduced_sm_base_with_the_published_model(capsys):
    code, out, err = _run(capsys, ["scale", "corpus:matmul_tiled", "--size", "medium", "--base",
                                   "h100:8", "--to", "h100:64,h200:132", "--method", "clusters",
                                   "--json"])
    assert code == 0, err
    answer = json.loads(out)
    assert answer["method"] == "clusters" and answer["base"] == "h100:8"
    got = {(t["device"], t["sm_count"]): t for t in answer["targets"]}
    assert set(got) == {("h100-sxm", 64), ("h200", 132)}
    for target in got.values():
        assert target["time_s"] < answer["base_time_s"]  # more SMs: faster
        assert target["measured_time_s"] > 0


def test_scale_defaults_to_every_configuration_in_a_table(capsys):
    code, out, err = _run(capsys, ["scale", "corpus:copy_vector"])
    assert code == 0, err
    assert "h200:8" in out and "h100-sxm:96" in out and "h100-sxm:132" not in out


@pytest.mark.parametrize("argv, message", [
    (["corpus:matmul_tiled", "--to", "h100:40"], "outside the measured configurations"),
    (["corpus:matmul_tiled", "--to", "h100:300"], "outside the measured configurations"),
    (["corpus:matmul_tiled", "--to", "mi300:32"], "unknown"),
    (["corpus:matmul_tiled", "--to", "a100:32"], "no measured surfaces"),
    (["corpus:matmul_tiled", "--base", "h200:64"], "no counters"),
    (["corpus:matmul_tiled", "--base", "h100:64"], "run at h100:8, h100:132, h200:132"),
    (["corpus:matmul_tiled", "--method", "forest"], "choose one of regression, clusters"),
    (["corpus:no_such_kernel"], "unknown kernel"),
    (["matmul_tiled.cu"], "corpus:NAME"),
])
def test_bad_input_exits_2_with_what_to_do(capsys, argv, message):
    code, out, err = _run(capsys, ["scale", *argv])
    assert code == 2
    assert message in err


def test_bad_input_as_json_has_a_hint(capsys):
    code, out, _ = _run(capsys, ["scale", "corpus:matmul_tiled", "--base", "h200:64", "--json"])
    assert code == 2
    answer = json.loads(out)
    assert answer["kind"] == "bad input" and "as --base" in answer["hint"]

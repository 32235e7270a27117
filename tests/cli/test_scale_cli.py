"""``kerncast scale`` end to end on the shipped data, and the mistakes a user makes (exit 2,
a message saying what to do)."""

from __future__ import annotations

import json
from pathlib import Path

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
    (["corpus:matmul_tiled", "--base", "h200:96"], "no counters"),
    (["corpus:matmul_tiled", "--base", "h100:64"],
     "run at h100:8, h100:132, h200:8, h200:16, h200:32, h200:64, h200:132"),
    (["corpus:matmul_tiled", "--method", "forest"], "choose one of regression, clusters"),
    (["corpus:no_such_kernel"], "unknown kernel"),
    (["matmul_tiled.cu"], "no such file"),
    ([], "give a kernel"),
])
def test_bad_input_exits_2_with_what_to_do(capsys, argv, message):
    code, out, err = _run(capsys, ["scale", *argv])
    assert code == 2
    assert message in err


def test_bad_input_as_json_has_a_hint(capsys):
    code, out, _ = _run(capsys, ["scale", "corpus:matmul_tiled", "--base", "h200:96", "--json"])
    assert code == 2
    answer = json.loads(out)
    assert answer["kind"] == "bad input" and "as --base" in answer["hint"]


def _shipped_base_run(kernel: str = "matmul_tiled"):
    """A base run file's contents made from a corpus kernel's shipped H100 base run."""
    from kerncast.measure import BaseRun
    from kerncast.models import base_runs, shipped_data
    from kerncast.models._scale import _instance

    data = shipped_data()
    run = base_runs(data, ("h100-sxm", 132)).loc[_instance(data, kernel, "large")]
    return BaseRun(kernel=f"my_{kernel}", device="h100-sxm", sm_count=132,
                   time_s=float(run["time_s"]), power_w=float(run["power_w"]),
                   energy_j=float(run["energy_j"]), counters=dict(run["counters"]))


def test_ones_own_base_run_is_predicted_by_a_model_of_every_corpus_kernel(capsys, tmp_path):
    path = _shipped_base_run().save(tmp_path / "base.json")
    code, out, err = _run(capsys, ["scale", "--base-run", str(path), "--to", "h200:64,h100:32",
                                   "--json"])
    assert code == 0, err
    own = json.loads(out)
    assert own["kernel"] == "my_matmul_tiled" and own["base"] == "h100:132"
    assert own["trained_on"] == 58  # every corpus kernel: none is the one predicted
    code, out, err = _run(capsys, ["scale", "corpus:matmul_tiled", "--to", "h200:64,h100:32",
                                   "--json"])
    corpus = json.loads(out)
    for mine, theirs in zip(own["targets"], corpus["targets"]):
        assert (mine["device"], mine["sm_count"]) == (theirs["device"], theirs["sm_count"])
        # the same base run; the fits differ by the one kernel the corpus path leaves out
        assert mine["time_s"] == pytest.approx(theirs["time_s"], rel=0.25)
        assert mine["measured_time_s"] is None and theirs["measured_time_s"] > 0
    assert own["targets"][1]["time_s"] > own["base_time_s"]  # a quarter of the SMs: slower


def test_a_base_run_without_power_is_saved_as_strict_json_and_read_back(tmp_path):
    import math
    from dataclasses import replace

    from kerncast.measure import BaseRun

    run = replace(_shipped_base_run(), power_w=math.nan, energy_j=math.nan)
    path = run.save(tmp_path / "run.json")

    def refuse(token):
        raise ValueError(token)

    data = json.loads(path.read_text(), parse_constant=refuse)  # no NaN tokens
    assert data["power_w"] is None and data["energy_j"] is None
    back = BaseRun.load(path)
    assert math.isnan(back.power_w) and back.time_s == run.time_s


def test_a_base_run_file_round_trips_and_shows_in_a_table(capsys, tmp_path):
    from kerncast.measure import BaseRun

    run = _shipped_base_run("copy_vector")
    path = run.save(tmp_path / "run.json")
    assert BaseRun.load(path) == run
    plot = tmp_path / "surface.png"
    code, out, err = _run(capsys, ["scale", "--base-run", str(path), "--to", "h200,h100:64",
                                   "--plot", str(plot)])
    assert code == 0, err
    assert "my_copy_vector" in out and "h200:132" in out and "58 corpus kernels" in out
    from matplotlib.image import imread

    height, width = imread(plot).shape[:2]
    assert width < 1.5 * 5.5 * 120  # one panel: nothing measured, so no error map


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("counters"), "lacks counters"),
    (lambda d: d.update(counters={}), "has no counters"),
    (lambda d: d.update(format=7), "not a kerncast base run"),
    (lambda d: d.update(time_s=0), "must be positive"),
    (lambda d: d.update(time_s="fast"), "not a number"),
    (lambda d: d.update(device="a100"), "no surfaces"),
    (lambda d: d.update(device="h200", sm_count=96), "no base runs with counters"),
])
def test_a_bad_base_run_exits_2_with_what_to_do(capsys, tmp_path, change, message):
    data = _shipped_base_run().to_dict()
    change(data)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    code, out, err = _run(capsys, ["scale", "--base-run", str(path)])
    assert code == 2
    assert message in err


def test_a_base_run_with_a_kernel_or_another_base_exits_2(capsys, tmp_path):
    path = _shipped_base_run().save(tmp_path / "run.json")
    code, _, err = _run(capsys, ["scale", "corpus:copy_vector", "--base-run", str(path)])
    assert code == 2 and "either a kernel" in err
    code, _, err = _run(capsys, ["scale", "--base-run", str(path), "--base", "h200:132"])
    assert code == 2 and "differs from the base run's h100:132" in err
    code, _, err = _run(capsys, ["scale", "--base-run", str(tmp_path / "none.json")])
    assert code == 2 and "no base run at" in err
    code, _, err = _run(capsys, ["scale", "corpus:copy_vector", "--save-base", str(path)])
    assert code == 2 and "shipped data's" in err


def test_a_base_the_model_cannot_start_from_is_refused_before_anything_is_measured(capsys):
    # no GPU here: a measurement would fail with exit 1, the refusal comes first (exit 2)
    launch = Path(__file__).resolve().parents[1] / "userkernels" / "large" / "saxpy.toml"
    code, _, err = _run(capsys, ["scale", str(launch), "--base", "h200:96"])
    assert code == 2 and "no base runs with counters" in err


@pytest.mark.gpu
def test_ones_own_kernel_is_measured_here_and_scaled(capsys, tmp_path):
    pytest.importorskip("cupy")
    source = tmp_path / "saxpy.cu"
    source.write_text('extern "C" __global__ void saxpy(float *y, const float *x, float a, int n)'
                      ' { int i = blockIdx.x * blockDim.x + threadIdx.x;'
                      ' if (i < n) y[i] = a * x[i] + y[i]; }')
    saved = tmp_path / "base.json"
    code, out, err = _run(capsys, [
        "scale", str(source), "--kernel", "saxpy", "--grid", "65536", "--block", "256",
        "--arg", "y=float32[16777216]:uniform(0,1)", "--arg", "x=float32[16777216]:uniform(0,1)",
        "--arg", "a=float32:2", "--arg", "n=int32:16777216", "--to", "h100:32,h200:64",
        "--save-base", str(saved), "--json"])
    assert code == 0, err
    answer = json.loads(out)
    assert answer["base_run"]["counters"]["blocks"] == 65536
    assert all(t["time_s"] > 0 for t in answer["targets"])
    assert saved.is_file()


def test_the_shipped_base_run_of_ones_own_kernel_measured_on_an_h200_is_predicted(capsys):
    """data/probes/saxpy-base-h200.json: tests/userkernels/large/saxpy.toml's base run,
    measured on an H200 by kerncast scale --save-base (2026-11-29)."""
    shipped = Path(__file__).resolve().parents[2] / "data" / "probes" / "saxpy-base-h200.json"
    code, out, err = _run(capsys, ["scale", "--base-run", str(shipped), "--to", "h200:64,h100:132"])
    assert code == 0, err
    assert "saxpy" in out and "from its base run at h200:132" in out
    assert "none of it measured" in out and "h100-sxm:132" in out

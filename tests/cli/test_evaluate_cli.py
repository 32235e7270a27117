"""``kerncast evaluate`` and ``kerncast report``: JSON output, reports and exit codes."""

from __future__ import annotations

import json

import pytest

from kerncast.cli import main
from kerncast.models import list_predictors
from kerncast.data import Dataset
from tests.synthetic import synthetic_dataset


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "synthetic-h100"
    synthetic_dataset(kernels=("matmul_tiled", "synthetic_stream", "synthetic_stencil")).write(path)
    return path


def test_evaluate_json(dataset_dir, capsys):
    assert main(["evaluate", "--dataset", str(dataset_dir), "--models", "all", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dataset"] == "synthetic-h100" and out["folds"] == "kernel"
    assert out["report"] is None
    assert {r["model"] for r in out["per_model"]} == set(list_predictors())
    assert {"mape_pct", "spearman", "regret_pct", "s_per_prediction"} <= set(out["per_model"][0])
    serving = {r["model"] for r in out["per_model"] if r["predicted"]}
    assert {r["kernel"] for r in out["failures"] if r["model"] in serving} == {"synthetic_stream",
                                                                              "synthetic_stencil"}
    assert {r["benchmark"] for r in out["survey"]} == {"MM"}
    assert len(out["survey"]) == len(list_predictors())


def test_evaluate_tables_and_selection(dataset_dir, capsys, monkeypatch):
    from kerncast.cli._output import console

    monkeypatch.setattr(console, "width", 200)
    assert main(["evaluate", "-d", str(dataset_dir), "--models", "roofline", "--kernels",
                 "matmul_tiled", "--sizes", "medium", "--folds", "2"]) == 0
    out = capsys.readouterr().out
    assert "roofline" in out and "the survey's comparison, measured" in out
    assert "survey MM: matmul_tiled" in out and "survey BFS: not in this dataset" in out


def test_evaluate_writes_the_report(dataset_dir, tmp_path, capsys):
    out_dir = tmp_path / "rep"
    assert main(["evaluate", "-d", str(dataset_dir), "--models", "roofline", "--report",
                 str(out_dir), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["report"] == str(out_dir / "index.html")
    assert (out_dir / "index.html").exists() and (out_dir / "figures").is_dir()


def test_report_command(dataset_dir, tmp_path, capsys, monkeypatch):
    assert main(["report", "-d", str(dataset_dir), "--models", "roofline", "--out",
                 str(tmp_path / "r"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["report"] == str(tmp_path / "r" / "index.html")
    monkeypatch.chdir(tmp_path)
    assert main(["report", "-d", str(dataset_dir), "--models", "roofline",
                 "--kernels", "matmul_tiled"]) == 0
    assert (tmp_path / "reports" / "synthetic-h100" / "index.html").exists()


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    return err


def test_unknown_model_lists_the_known_ones(dataset_dir, capsys):
    assert main(["evaluate", "-d", str(dataset_dir), "--models", "rofline"]) == 2
    error = _error(capsys)
    assert error.startswith("error: unknown model 'rofline'; did you mean roofline")
    assert error.endswith(f"the known models are: {', '.join(sorted(list_predictors()))}")


def test_kernels_not_in_the_dataset(dataset_dir, capsys):
    assert main(["evaluate", "-d", str(dataset_dir), "--kernels", "bfs_top_down"]) == 2
    assert _error(capsys).startswith("error: kernel(s) bfs_top_down not in synthetic-h100; it "
                                     "has: matmul_tiled, synthetic_stencil, synthetic_stream")


def test_empty_dataset_and_missing_columns(tmp_path, capsys):
    empty = synthetic_dataset(kernels=("matmul_tiled",)).times.iloc[0:0]
    Dataset(times=empty).write(tmp_path / "empty")
    assert main(["evaluate", "-d", str(tmp_path / "empty")]) == 2
    assert _error(capsys) == ("error: empty has no timing rows; measure kernels first "
                              "(kerncast measure)")
    times = synthetic_dataset(kernels=("matmul_tiled",)).times.drop(columns=["time_median_s"])
    Dataset(times=times).write(tmp_path / "old")
    assert main(["evaluate", "-d", str(tmp_path / "old"), "--models", "roofline"]) == 2
    assert "the times table lacks the column 'time_median_s'" in _error(capsys)


def test_not_a_dataset(tmp_path, capsys):
    assert main(["evaluate", "-d", str(tmp_path / "nowhere")]) == 2
    assert "is not a kerncast dataset" in _error(capsys)


def test_help_shows_an_example(capsys):
    assert main(["evaluate", "--help"]) == 0
    assert "Example: kerncast evaluate --dataset" in capsys.readouterr().out
    assert main(["report", "--help"]) == 0
    assert "Example: kerncast report --dataset" in capsys.readouterr().out


def test_another_gpus_launches_are_scaled_from_the_base_gpus_dataset(capsys):
    argv = ["evaluate", "--dataset", "data/h200", "--models", "scaling-surfaces", "--sizes",
            "large", "--folds", "2", "--json"]
    for kernel in ("copy_vector", "matmul_tiled", "arith_fp32", "reduce_tree"):
        argv += ["--kernels", kernel]
    assert main(argv) == 0
    (alone,) = json.loads(capsys.readouterr().out)["per_model"]
    assert main([*argv, "--base-dataset", "data/h100"]) == 0
    (scaled,) = json.loads(capsys.readouterr().out)["per_model"]
    assert alone["predicted"] == 0  # data/h200 holds no H100 base runs
    assert scaled["predicted"] >= 4 and scaled["mape_pct"] < 100  # each kernel's default launch

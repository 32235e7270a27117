"""The command line on one's own kernel: new, predict, measure; mistakes are exit 2 with a
message naming what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kerncast.cli import main

pytestmark = pytest.mark.toolchain

SAXPY = ('extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {\n'
         '    int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
         '    if (i < n) y[i] = a * x[i] + y[i];\n}\n')
STRUCT = ('struct P { float a; int n; double g; };\n'
          'extern "C" __global__ void k(const float *x, P p, double *y) {\n'
          '    int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
          '    if (i < p.n) y[i] = p.g * x[i] + p.a;\n}\n')
GATHER = ('extern "C" __global__ void gather(float *y, const int *idx, const float *x) {\n'
          '    int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
          '    y[i] = x[idx[i]];\n}\n')
SAXPY_ARGS = ["n=int32:4096", "a=float32:2", "x=float32[4096]:uniform(0, 1)", "y=float32[4096]"]


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _source(tmp_path: Path, text: str = SAXPY, name: str = "k.cu") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _predict(tmp_path, source_text, entry, args, grid="16", block="256"):
    argv = ["predict", _source(tmp_path, source_text), "--kernel", entry, "--grid", grid,
            "--block", block, "--json"]
    for spec in args:
        argv += ["--arg", spec]
    return argv


def test_new_writes_a_template_that_predicts(tmp_path, capsys):
    code, out, err = _run(capsys, ["new", str(tmp_path / "mine")])
    assert code == 0, err
    code, out, err = _run(capsys, ["predict", str(tmp_path / "mine" / "launch.toml"), "--json"])
    assert code == 0, err
    assert json.loads(out)["based_on"]["blocks"] == 4096
    code, _, err = _run(capsys, ["new", str(tmp_path / "mine")])
    assert code == 2 and "exists" in err


def test_a_source_file_predicts_with_its_launch(tmp_path, capsys):
    code, out, err = _run(capsys, _predict(tmp_path, SAXPY, "saxpy", SAXPY_ARGS))
    assert code == 0, err
    p = json.loads(out)
    assert p["based_on"]["blocks"] == 16 and p["based_on"]["registers"] > 0


@pytest.mark.parametrize("args, message", [
    (SAXPY_ARGS[:3], "saxpy takes 4 arguments; the launch gives 3 (n, a, x)"),
    (["n=float32[4]", *SAXPY_ARGS[1:]], "argument n is an array but parameter"),
    (["n=int32:4096", "a=float32:2", "x=int32:3", "y=float32[4096]"],
     "argument x is the number 3 but the kernel uses parameter 2 as a pointer"),
    (["n=int64:99999999999", *SAXPY_ARGS[1:]], "does not fit the .u32 parameter"),
    (["n=int32:4096", "a=float32:2", "x=float32[4096]:gaussian(0, 1)", "y=float32[4096]"],
     "unknown generator 'gaussian'"),
    (["n=int32:4096", "a=complex:2", *SAXPY_ARGS[2:]], "not a kernel argument type"),
])
def test_arguments_that_do_not_match_the_kernel_are_exit_2(tmp_path, capsys, args, message):
    code, out, err = _run(capsys, _predict(tmp_path, SAXPY, "saxpy", args))
    assert code == 2, (out, err)
    assert message in json.loads(out)["error"] and "Traceback" not in err  # --json: an object


def test_a_struct_of_the_wrong_size_is_exit_2(tmp_path, capsys):
    good = ["x=float32[512]", "p=struct:float32=1,int32=512,float64=2", "y=float64[512]"]
    code, _, err = _run(capsys, _predict(tmp_path, STRUCT, "k", good, grid="2"))
    assert code == 0, err
    bad = ["x=float32[512]", "p=struct:float32=1,int32=512", "y=float64[512]"]
    code, out, _ = _run(capsys, _predict(tmp_path, STRUCT, "k", bad, grid="2"))
    assert code == 2 and "must be 16 bytes" in json.loads(out)["error"]


def test_an_array_too_small_for_the_grid_names_the_line_and_thread(tmp_path, capsys):
    idx = tmp_path / "idx.npy"
    np.save(idx, np.full(512, 600, np.int32))
    args = ["y=float32[512]", f"idx=npy:{idx}", "x=float32[100]"]
    code, out, _ = _run(capsys, _predict(tmp_path, GATHER, "gather", args, grid="2"))
    text = json.loads(out)["error"]
    assert code == 2 and "out-of-bounds" in text and "thread" in text and "PTX line" in text


@pytest.mark.parametrize("extra, message", [
    (["--grid", "16"], "give --kernel, --block"),
    (["--kernel", "nope", "--grid", "1", "--block", "32"], "no kernel 'nope'"),
    (["--kernel", "saxpy", "--grid", "a", "--block", "32"], "--grid 'a' is not"),
])
def test_an_incomplete_launch_is_exit_2(tmp_path, capsys, extra, message):
    code, _, err = _run(capsys, ["predict", _source(tmp_path), *extra, "--arg", "n=int32:1"])
    assert code == 2 and message in " ".join(err.split())


def test_launch_options_do_not_go_with_a_launch_file(tmp_path, capsys):
    code, _, err = _run(capsys, ["new", str(tmp_path / "m")])
    code, _, err = _run(capsys, ["predict", str(tmp_path / "m" / "launch.toml"), "--grid", "4"])
    assert code == 2 and "is a launch file" in err


def test_measure_on_pocl_runs_ones_own_opencl_kernel(pocl, capsys):
    path = Path(__file__).resolve().parents[1] / "userkernels" / "vadd.toml"
    code, out, err = _run(capsys, ["measure", str(path), "--backend", "pocl", "--json"])
    assert code == 0, err
    row = json.loads(out)
    assert row["status"] == "ok" and row["kernel"] == "vadd" and row["time_median_s"] > 0


@pytest.mark.parametrize("target", ["corpus:copy_vector", "launch.toml"])
def test_a_sweep_for_an_unknown_device_fails_before_it_starts(tmp_path, capsys, target):
    main(["new", str(tmp_path / "m")])
    capsys.readouterr()
    path = str(tmp_path / "m" / target) if target.endswith(".toml") else target
    code, out, err = _run(capsys, ["sweep", path, "--device", "nosuch"])
    assert code == 2 and "nosuch" in err and not out


def test_a_sweep_is_scored_against_a_cache_kernel_tuner_measured(tmp_path, capsys):
    """The cache is Kernel Tuner's own (vector_add on an RTX A4000, tests/tuner/data)."""
    measured = Path(__file__).resolve().parents[1] / "tuner" / "data" / "test_cache_file.json"
    (tmp_path / "vector_add.cu").write_text(
        "__global__ void vector_add(float *c, float *a, float *b, int n) {\n"
        "    int i = blockIdx.x * block_size_x + threadIdx.x;\n"
        "    if (i < n) c[i] = a[i] + b[i];\n}\n")
    blocks = list(range(128, 1025, 64))
    (tmp_path / "vector_add.toml").write_text(
        'kernel = "vector_add"\nsource = "vector_add.cu"\nproblem_size = 100000\n'
        'args = ["c=float32[100000]", "a=float32[100000]", "b=float32[100000]", '
        '"n=int32:100000"]\n'
        f"[tune_params]\nblock_size_x = {blocks}\n")
    code, out, err = _run(capsys, ["sweep", str(tmp_path / "vector_add.toml"), "--compare",
                                   str(measured), "--json"])
    assert code == 0, err
    result = json.loads(out)
    assert len(result["rows"]) == 15 and result["compare"]["matched"] == 15
    assert -1 <= result["compare"]["spearman"] <= 1 and result["compare"]["mape_pct"] >= 0
    code, _, err = _run(capsys, ["sweep", "corpus:copy_vector", "--compare", str(measured)])
    assert code == 2 and "launch file" in err


def _vector_add_file(tmp_path, blocks):
    (tmp_path / "vector_add.cu").write_text(
        "__global__ void vector_add(float *c, float *a, float *b, int n) {\n"
        "    int i = blockIdx.x * block_size_x + threadIdx.x;\n"
        "    if (i < n) c[i] = a[i] + b[i];\n}\n")
    (tmp_path / "vector_add.toml").write_text(
        'kernel = "vector_add"\nsource = "vector_add.cu"\nproblem_size = 100000\n'
        'args = ["c=float32[100000]", "a=float32[100000]", "b=float32[100000]", '
        '"n=int32:100000"]\nrestrictions = ["block_size_x <= 512"]\n'
        f"[tune_params]\nblock_size_x = {blocks}\n")
    return str(tmp_path / "vector_add.toml")


def test_a_sweep_samples_searches_or_takes_a_list_and_a_config_outside_is_a_row(
        tmp_path, capsys):
    path = _vector_add_file(tmp_path, [32, 64, 128, 256, 512, 1024])
    code, out, err = _run(capsys, ["sweep", path, "--strategy", "random_sample",
                                   "--max-configs", "3", "--seed", "2", "--json"])
    assert code == 0, err
    assert len(json.loads(out)) == 3
    code, out, err = _run(capsys, ["sweep", path, "--strategy", "greedy_ils", "--max-configs",
                                   "4", "--json"])
    assert code == 0, err
    assert len(json.loads(out)) == 4
    listed = tmp_path / "configs.csv"
    listed.write_text("block_size_x\n128\n1024\n48\n")
    code, out, err = _run(capsys, ["sweep", path, "--configs", str(listed), "--json"])
    assert code == 0, err
    rows = {r["config"]: r for r in json.loads(out)}
    assert rows["block_size_x=128"]["error"] == "" and rows["block_size_x=128"]["seconds"] > 0
    assert "excluded by the restrictions" in rows["block_size_x=1024"]["error"]
    assert "not among the values" in rows["block_size_x=48"]["error"]

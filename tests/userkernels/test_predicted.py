"""Every launch file of this folder predicted statically, through the API and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import kerncast
from kerncast.cli import main
from kerncast.core import load_launch_file

pytestmark = pytest.mark.toolchain

HERE = Path(__file__).resolve().parent
LAUNCH_FILES = sorted(HERE.glob("*.toml"))


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.stem)
def test_predicted_through_the_api(path):
    kernel, launch = load_launch_file(path).launch()
    p = kerncast.predict(kernel, launch, device="h100")
    assert np.isfinite(p.seconds) and p.seconds > 0
    assert p.based_on["blocks"] == launch.blocks and p.based_on["registers"] > 0
    assert p.based_on["configuration"] == launch.label()


@pytest.mark.parametrize("path", LAUNCH_FILES[::3], ids=lambda p: p.stem)
def test_predicted_through_the_cli(path, capsys):
    code = main(["predict", str(path), "--device", "h200", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    p = json.loads(out)
    assert p["seconds"] > 0 and p["based_on"]["device"].startswith("h200")


def test_a_kernel_named_like_a_corpus_kernel_is_the_users():
    kernel, launch = load_launch_file(HERE / "matmul_naive.toml").launch()
    p = kerncast.predict(kernel, launch)
    corpus = kerncast.predict("corpus:matmul_naive", size="small")
    assert p.based_on["blocks"] == launch.blocks != corpus.based_on["blocks"]


def test_data_dependent_user_kernels_run_on_their_own_data():
    kernel, launch = load_launch_file(HERE / "bfs_level.toml").launch()
    p = kerncast.predict(kernel, launch)
    assert p.based_on["data_dependent"] is True and p.based_on["inputs"] == "generated"


def test_a_source_file_with_its_launch_on_the_command_line(capsys):
    argv = ["predict", str(HERE / "symlog.cu"), "--kernel", "symlog", "--grid", "64",
            "--block", "256", "--json"]
    toml = load_launch_file(HERE / "symlog.toml").raw
    for spec in toml["args"]:
        argv += ["--arg", spec]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["based_on"]["blocks"] == 64


def test_a_launch_file_sweeps_its_tune_params_into_kernel_tuners_cache(tmp_path, capsys):
    cache = tmp_path / "conv.json"
    code = main(["sweep", str(HERE / "conv1d_tuned.toml"), "--cache", str(cache), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = json.loads(out)
    lf = load_launch_file(HERE / "conv1d_tuned.toml")
    assert len(rows) == len(lf.configs()) > 1
    stored = kerncast.tuner.read_cache(cache)
    assert len(stored.results) == len(rows)
    assert sorted(stored.results["time_ms"]) == pytest.approx(
        sorted(r["seconds"] * 1e3 for r in rows))

"""``kerncast train``: writes a loadable model, refuses bad input with exit code 2."""

from __future__ import annotations

import json

from kerncast.cli import main
from kerncast.models import Predictor
from tests.synthetic import synthetic_dataset


def test_train_writes_a_model(tmp_path, capsys):
    data_dir = tmp_path / "synthetic-h100"
    synthetic_dataset(kernels=("matmul_naive", "synthetic_stencil", "synthetic_stream"),
                      failed_rows=False).write(data_dir)
    out = tmp_path / "svr.json"
    assert main(["train", "sampling-svr", "--dataset", str(data_dir), "--out", str(out),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["model"] == "sampling-svr" and summary["kernels"] >= 2
    assert Predictor.load(out).name == "sampling-svr"


def test_train_bad_input_exits_2(tmp_path, capsys):
    assert main(["train", "roofline", "--dataset", str(tmp_path)]) == 2
    assert main(["train", "no-such-model", "--dataset", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err

"""``kerncast predict`` and ``kerncast sweep``: JSON output, and bad input as exit code 2."""

from __future__ import annotations

import functools
import json
import subprocess
import sys

import pytest

import kerncast.emu
from kerncast.cli import main
from kerncast.models import BREAKDOWN_KEYS

pytestmark = pytest.mark.toolchain  # compiles corpus kernels


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_predict_json(capsys):
    code, out, err = _run(capsys, ["predict", "corpus:copy_vector", "--size", "small",
                                   "--json"])
    assert code == 0, err
    p = json.loads(out)
    assert p["model"] == "static" and p["seconds"] > 0
    assert set(p["breakdown"]) == set(BREAKDOWN_KEYS)
    assert p["based_on"]["device"] == "h100-sxm" and p["based_on"]["blocks"] == 8


def test_predict_table(capsys):
    code, out, err = _run(capsys, ["predict", "copy_vector", "--size", "small", "-d", "h200"])
    assert code == 0, err
    assert "copy_vector on h200 (static)" in out and "where the time goes" in out


@pytest.mark.parametrize("argv,message", [
    (["predict", "corpus:no_such_kernel"], "no corpus kernel 'no_such_kernel'"),
    (["predict", "corpus:copy_vector", "--size", "huge"], "has no size 'huge'"),
    (["predict", "corpus:copy_vector", "--device", "no-such-gpu"], "unknown device"),
    (["predict", "corpus:copy_vector", "--config", "bx=2048"], "bx=2048 is not allowed"),
    (["predict", "corpus:copy_vector", "--config", "bx"], "is not NAME=VALUE"),
    (["predict", "corpus:convolve_rows", "-c", "bx=16", "-c", "by=2"],
     "breaks convolve_rows's restriction 'bx * by >= 128'"),
    (["predict", "corpus:copy_vector", "--model", "sampling", "--budget", "2"],
     "--budget 2.0 is not a share of the launch"),
    (["predict", "corpus:copy_vector", "--budget", "0.1"], "the model 'static' takes no budget"),
])
def test_bad_input_exits_2_without_a_traceback(capsys, argv, message):
    code, out, err = _run(capsys, argv)
    assert code == 2
    assert message in err and err.startswith("error:")
    assert "Traceback" not in out + err


def test_an_emulation_over_budget_exits_2(capsys, monkeypatch):
    monkeypatch.setattr(kerncast.emu, "emulate",
                        functools.partial(kerncast.emu.emulate, step_budget=50))
    code, out, err = _run(capsys, ["predict", "corpus:arith_fp32", "--size", "small"])
    assert code == 2
    assert "did not finish within 50 warp-instruction steps" in err
    assert "Traceback" not in out + err


def test_the_installed_command_exits_2_on_bad_input():
    proc = subprocess.run([sys.executable, "-m", "kerncast", "predict",
                           "corpus:no_such_kernel"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2
    assert "no corpus kernel" in proc.stderr and "Traceback" not in proc.stderr


def test_sweep_ranks_every_configuration(capsys):
    code, out, err = _run(capsys, ["sweep", "corpus:matmul_tiled", "--size", "small",
                                   "--json"])
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) == 6  # tile in (8, 16, 32) x pad in (0, 1)
    seconds = [r["seconds"] for r in rows]
    assert seconds == sorted(seconds) and seconds[0] > 0
    assert all(r["bottleneck"] in BREAKDOWN_KEYS and r["error"] == "" for r in rows)


def test_a_straggler_that_sets_the_time_gets_a_note():
    from kerncast.cli._predict import _straggler_note

    loop = {"seconds": 3.5e-3, "trips": 4096, "traced_trips": 55, "offsets": "row_ptr",
            "stride": 4}
    note = _straggler_note(3.7e-3, loop)
    assert note is not None and "4,096 iterations" in note and "row_ptr" in note
    assert _straggler_note(20e-3, loop) is None  # a small part of the time: no note
    assert _straggler_note(3.7e-3, None) is None


def test_a_grid_predicted_as_two_runs_says_so():
    from kerncast.cli._predict import _segments_note

    runs = [{"first_block": 0, "blocks": 65536, "seconds": 165e-6, "bottleneck": "memory"},
            {"first_block": 65536, "blocks": 196608, "seconds": 161e-6, "bottleneck": "compute"}]
    note = _segments_note(runs)
    assert note is not None and "from 65,536 on" in note
    assert "blocks 0 to 65,535: 165.0 µs (memory)" in note
    assert "blocks 65,536 to 262,143: 161.0 µs (compute)" in note
    assert _segments_note(None) is None


def test_predict_for_a_device_given_as_its_spec_file(capsys, tmp_path):
    from kerncast.devices._catalog import SPEC_DIR

    spec = tmp_path / "my-gpu.toml"
    spec.write_text((SPEC_DIR / "a100-40gb.toml").read_text())
    code, out, err = _run(capsys, ["predict", "corpus:copy_vector", "--size", "small",
                                   "--device", str(spec), "--json"])
    assert code == 0, err
    p = json.loads(out)
    assert p["based_on"]["device"] == "my-gpu" and p["seconds"] > 0
    assert p["based_on"]["adapted_from"] == "h100-sxm"
    assert any("boost clock, 1410 MHz" in line for line in p["based_on"]["adaptation"])


def test_predict_for_an_uncalibrated_device_prints_what_it_assumes(capsys):
    code, out, err = _run(capsys, ["predict", "corpus:copy_vector", "--size", "small",
                                   "--device", "a100-80gb"])
    assert code == 0, err
    assert "calibration of h100-sxm was adapted to its spec, assuming:" in out
    assert "  - DRAM read, write and copy bandwidths: h100-sxm's x" in out


def test_a_breakdown_that_adds_up_to_more_than_the_total_is_said_to_overlap():
    from kerncast.cli._predict import overlap_note

    assert overlap_note({"compute": 1.0, "memory": 2.0, "launch": 0.1}, 2.5).startswith(
        "note: the parts overlap")
    assert overlap_note({"memory": 2.0, "launch": 0.1, "latency": 0.4}, 2.5) is None


def test_text_from_the_models_is_printed_as_it_is(capsys, monkeypatch):
    """Brackets in a model's reasons are text, not terminal markup ('kerncast[cuda]' was
    printed as 'kerncast')."""
    import kerncast.models
    from kerncast import Prediction

    said = Prediction(1e-3, "static", based_on={
        "device": "h100-sxm", "chosen": "static: the best [held out]",
        "passed_over": ["sampling: pip install 'kerncast[cuda]'"], "inputs": "x=float32[n]"})
    monkeypatch.setattr(kerncast.models, "predict", lambda *a, **k: said)
    code, out, err = _run(capsys, ["predict", "corpus:copy_vector", "--size", "small",
                                   "--model", "auto"])
    assert code == 0, err
    flat = " ".join(out.split())
    assert "'kerncast[cuda]'" in flat and "the best [held out]" in flat
    assert "inputs=x=float32[n]" in flat


def test_config_takes_several_pairs_in_one_item_as_sweeps_print_them():
    from kerncast import InputError  # noqa: PLC0415
    from kerncast.cli._target import parse_config  # noqa: PLC0415

    assert parse_config(["bx=256,vec=4", "pad=1"]) == {"bx": 256, "vec": 4, "pad": 1}
    assert parse_config(["PAIR=1,2"], "--define") == {"PAIR": "1,2"}  # a define keeps commas
    with pytest.raises(InputError, match="'vec' is not NAME=VALUE"):
        parse_config(["bx=256,vec"])


def test_predict_reads_a_comma_separated_config(capsys):
    code, out, _ = _run(capsys, ["predict", "corpus:copy_vector", "--size", "small",
                                 "--config", "bx=64,vec=2", "--json"])
    assert code == 0 and json.loads(out)["based_on"]["configuration"] == "bx=64,vec=2"


def test_the_table_names_the_calibrated_waits_a_prediction_rests_on(capsys):
    code, out, _ = _run(capsys, ["predict", "corpus:copy_vector", "--size", "large",
                                 "--device", "h200"])
    assert code == 0
    text = " ".join(out.split())  # however the console wraps it
    assert "block_turnaround=" in text and "cycles (h200)" in text
    assert "dram_load_latency=up to +" in text and "of peak (h200)" in text
    assert "dram_spread=standard deviation " in text


def test_the_breakdown_names_the_pipe_compute_is_the_time_of(capsys):
    code, out, _ = _run(capsys, ["predict", "corpus:arith_int32", "--size", "medium",
                                 "--device", "h100"])
    assert code == 0
    text = " ".join(out.split())
    # shifts, logic and compares: the integer ALU, at two cycles a warp instruction
    assert "compute is the integer ALU: busy" in text
    code, out, _ = _run(capsys, ["predict", "corpus:arith_int32", "--size", "medium",
                                 "--device", "h100", "--json"])
    pipe = json.loads(out)["based_on"]["compute_pipe"]
    assert pipe["pipe"] == "alu" and 0.5 < pipe["busy"] <= 1.0

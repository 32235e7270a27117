"""The ``devices`` and ``occupancy`` commands: JSON output and exit codes."""

import json

from kerncast.cli import main


def test_occupancy_json_prints_blocks_per_sm(capsys):
    assert main(["occupancy", "--device", "h100", "--block", "256", "--regs", "32",
                 "--smem", "0", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"blocks_per_sm": 8' in out
    assert json.loads(out)["limiting"] == "warps"


def test_devices_json_lists_every_spec(capsys):
    assert main(["devices", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {"h100-sxm", "h200", "gtx-580"} <= {r["key"] for r in rows}
    by_key = {r["key"]: r for r in rows}
    assert by_key["h200"]["calibration"] == "h200" and not by_key["h200"]["calibration_adapted"]
    assert by_key["a100-80gb"]["calibration"] == "h100-sxm"
    assert by_key["a100-80gb"]["calibration_adapted"]


def test_devices_table_says_which_calibration_each_is_predicted_from(capsys):
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert "calibration" in out and "own" in out and "adapted" in out


def test_devices_show_names_sources(capsys):
    assert main(["devices", "show", "gtx580"]) == 0
    out = capsys.readouterr().out
    assert "GTX 580" in out and "CUDA C Programming Guide" in out


def test_devices_show_json(capsys):
    assert main(["devices", "show", "h100", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["compute"]["sm_count"] == 132


def test_unknown_device_exits_2_with_one_line(capsys):
    assert main(["devices", "show", "h1000"]) == 2
    err = capsys.readouterr().err
    assert "unknown device 'h1000'" in err and "Traceback" not in err


def test_block_too_large_exits_2(capsys):
    code = main(["occupancy", "--device", "h100", "--block", "4096", "--regs", "32"])
    assert code == 2
    assert "exceeds the h100-sxm limit of 1024" in capsys.readouterr().err


def test_non_integer_option_exits_2(capsys):
    assert main(["occupancy", "--device", "h100", "--block", "abc", "--regs", "32"]) == 2


def test_devices_show_says_what_an_uncalibrated_device_is_predicted_from(capsys):
    assert main(["devices", "show", "a100-80gb"]) == 0
    out = capsys.readouterr().out
    assert "no calibration of its own; h100-sxm's adapted to this spec" in out
    assert "DRAM read, write and copy bandwidths" in out and "boost clock, 1410 MHz" in out
    assert main(["devices", "show", "h200"]) == 0
    out = capsys.readouterr().out
    assert "static model: its own calibration (measured 2026-" in out
    assert "adapted" not in out and "from h200's calibration" not in out


def test_devices_show_names_the_figures_a_calibrated_device_borrows(capsys):
    assert main(["devices", "show", "h100"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "static model: its own calibration" in text
    # the H100's calibration has no turnaround curve and no spread probe: the H200's
    assert "the block slot's turnaround: from h200's calibration (the same architecture" in text
    assert "the spread of single DRAM reads' latencies: from h200's calibration" in text

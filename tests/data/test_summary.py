"""``kerncast data summary``: what a dataset holds and which provenance is missing."""

import json

from kerncast.cli import main
from kerncast.data import summarize, write_part


def test_summary_counts_rows_kernels_configs_and_statuses(tmp_path, times_rows):
    rows = [*times_rows, {**times_rows[0], "size": "medium", "status": "wrong_output",
                          "error": "c: 1 of 2304 elements differ"}]
    write_part(tmp_path, "times", rows)
    info = summarize(tmp_path)
    times = info["tables"]["times"]
    assert times["rows"] == 7 and times["kernels"] == ["matmul_tiled"]
    assert times["sizes"] == ["medium", "small"] and times["configurations"] == 6
    assert times["sm_counts"] == [132] and times["status"] == {"ok": 6, "wrong_output": 1}
    assert info["empty_provenance"] == {} and info["parts"] == 1


def test_empty_provenance_is_reported(tmp_path, times_rows):
    rows = [{**r, "driver_version": ""} for r in times_rows[:2]] + times_rows[2:]
    rows[3] = {**rows[3], "sm_clock_mhz_after": None}
    write_part(tmp_path, "times", rows)
    assert summarize(tmp_path)["empty_provenance"] == {"times.driver_version": 2,
                                                       "times.sm_clock_mhz_after": 1}


def test_cli_prints_json_and_fails_on_gaps(tmp_path, times_rows, capsys):
    good, bad = tmp_path / "good", tmp_path / "bad"
    write_part(good, "times", times_rows)
    write_part(bad, "times", [{**r, "hostname": ""} for r in times_rows])
    assert main(["data", "summary", str(good), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out[0]["tables"]["times"]["rows"] == 6
    assert main(["data", "summary", str(good), str(bad)]) == 1
    captured = capsys.readouterr()
    assert "provenance: complete" in captured.out
    assert "empty provenance: times.hostname (6 rows)" in captured.err


def test_cli_compact(tmp_path, times_rows, capsys):
    write_part(tmp_path, "times", times_rows)
    assert main(["data", "compact", str(tmp_path)]) == 0
    assert "times 6 rows" in capsys.readouterr().out
    assert (tmp_path / "times.parquet").exists()

"""Datasets on disk: part files, compaction, deduplication, damaged files."""

import pandas as pd
import pytest

from kerncast import InputError
from kerncast.data import Dataset, compact, write_part
from kerncast.data._dataset import table_files


def test_parts_and_compacted_tables_read_as_one(tmp_path, times_rows):
    write_part(tmp_path, "times", times_rows[:3])
    write_part(tmp_path, "times", times_rows[3:])
    assert len(table_files(tmp_path, "times")) == 2
    data = Dataset.read(tmp_path)
    assert len(data.times) == 6 and data.kernels() == ["matmul_tiled"]
    counts = compact(tmp_path)
    assert counts == {"times": 6}
    assert table_files(tmp_path, "times") == [tmp_path / "times.parquet"]
    again = Dataset.read(tmp_path)
    assert sorted(again.times["config"]) == sorted(data.times["config"])
    write_part(tmp_path, "times", times_rows[:1])  # a later run adds a part beside it
    assert len(Dataset.read(tmp_path).times) == 6


def test_one_row_per_key_ok_first_then_latest(tmp_path, times_rows):
    failed = {**times_rows[0], "status": "timeout", "error": "killed",
              "measured_at": "2099-01-01T00:00:00+00:00"}
    write_part(tmp_path, "times", [times_rows[0]])
    write_part(tmp_path, "times", [failed])
    row = Dataset.read(tmp_path).times.iloc[0]
    assert row["status"] == "ok"  # an ok row wins over a later failure
    newer = {**times_rows[0], "time_median_s": 1.0, "measured_at": "2099-01-02T00:00:00+00:00"}
    write_part(tmp_path, "times", [newer])
    assert Dataset.read(tmp_path).times.iloc[0]["time_median_s"] == 1.0


def test_temporary_files_are_ignored(tmp_path, times_rows):
    write_part(tmp_path, "times", times_rows)
    (tmp_path / "parts" / "times" / ".half-written.parquet.tmp").write_bytes(b"PAR1 broken")
    assert len(Dataset.read(tmp_path).times) == 6


def test_a_damaged_file_is_named(tmp_path, times_rows):
    write_part(tmp_path, "times", times_rows)
    (tmp_path / "parts" / "times" / "zz-damaged.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match=r"cannot read .*zz-damaged.parquet as Parquet"):
        Dataset.read(tmp_path)


def test_a_file_breaking_the_schema_is_named(tmp_path, times_rows):
    frame = pd.DataFrame(times_rows).drop(columns=["hostname"])
    (tmp_path / "times.parquet").parent.mkdir(exist_ok=True)
    frame.to_parquet(tmp_path / "times.parquet")
    with pytest.raises(InputError, match=r"times.parquet: the times table lacks the column "
                                         r"'hostname'"):
        Dataset.read(tmp_path)


def test_a_directory_without_tables_is_not_a_dataset(tmp_path):
    with pytest.raises(InputError, match="is not a kerncast dataset"):
        Dataset.read(tmp_path)


def test_rows_are_checked_before_they_are_written(tmp_path, times_rows):
    with pytest.raises(InputError, match="column 'status' holds 'great'"):
        write_part(tmp_path, "times", [{**times_rows[0], "status": "great"}])
    assert not list(tmp_path.rglob("*.parquet"))


def test_a_sample_from_the_middle_is_a_row_of_its_own():
    from kerncast.data._dataset import dedupe

    key = {"kernel": "k", "language": "cuda", "size": "large", "config": "default",
           "device": "h200", "sm_count": 132, "k": 2, "l2_state": "cold", "status": "ok"}
    frame = pd.DataFrame([{**key, "first_block": 0, "time_median_s": 1e-5},
                          {**key, "first_block": 2048, "time_median_s": 4e-6}])
    assert sorted(dedupe("samples", frame)["first_block"]) == [0, 2048]

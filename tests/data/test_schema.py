"""The schema: data/SCHEMA.md in sync, and files checked column by column."""

from pathlib import Path

import pandas as pd
import pytest

from kerncast import InputError
from kerncast.data import schema

ROOT = Path(__file__).resolve().parents[2]


def test_schema_md_is_generated_from_the_schema():
    text = (ROOT / "data" / "SCHEMA.md").read_text()
    assert text == schema.render_markdown(), \
        "data/SCHEMA.md is stale: run python tools/write_schema.py"


def test_every_table_has_key_and_provenance_columns():
    for table in ("times", "samples", "counters", "energy", "cpu"):
        names = {c.name for c in schema.columns(table)}
        assert {"kernel", "language", "size", "config", "device", "sm_count"} <= names
        prov = {c.name for c in schema.provenance_columns(table)}
        assert {"device_name", "driver_version", "runtime_version", "backend",
                "sm_clock_mhz_before", "sm_clock_mhz_after", "mem_clock_mhz_before",
                "mem_clock_mhz_after", "measured_at", "kerncast_version", "tool_versions",
                "hostname", "seed"} <= prov


def test_conformed_rows_validate(times_rows):
    frame = schema.conform("times", pd.DataFrame(times_rows))
    schema.validate("times", frame, "rows")
    assert frame["registers"].dtype == "int64" and frame["status"].dtype == object


def test_missing_column_is_named(times_rows):
    frame = schema.conform("times", pd.DataFrame(times_rows)).drop(columns=["measured_at"])
    with pytest.raises(InputError, match=r"^x.parquet: the times table lacks the column "
                                         r"'measured_at' \(when the measurement ended"):
        schema.validate("times", frame, "x.parquet")


def test_wrong_type_is_named(times_rows):
    frame = schema.conform("times", pd.DataFrame(times_rows))
    frame["repetitions"] = frame["repetitions"].astype(str)
    with pytest.raises(InputError, match=r"x.parquet: column 'repetitions' has type .*, but the "
                                         r"schema says int"):
        schema.validate("times", frame, "x.parquet")


def test_unknown_status_is_refused(times_rows):
    frame = schema.conform("times", pd.DataFrame(times_rows))
    frame.loc[0, "status"] = "fine"
    with pytest.raises(InputError, match=r"column 'status' holds 'fine'; allowed are ok, "
                                         r"wrong_output"):
        schema.validate("times", frame, "x.parquet")


def test_nullable_integers_may_come_back_as_floats(times_rows):
    frame = schema.conform("times", pd.DataFrame(times_rows))
    frame["registers"] = frame["registers"].astype(float)
    frame.loc[0, "registers"] = float("nan")
    schema.validate("times", frame, "x")  # registers is nullable: floats with NaN are fine
    frame.loc[1, "registers"] = 3.5
    with pytest.raises(InputError, match="column 'registers'"):
        schema.validate("times", frame, "x")


def test_counters_accept_metric_columns_only(times_rows):
    base = {k: v for k, v in times_rows[0].items() if k in {c.name for c in
                                                            schema.columns("counters")}}
    row = {**base, "ncu_id": 0, "ncu_kernel_name": "matmul_tiled", "metrics_missing": "",
           "sample_k": 0, "psat": None, "blocks_launched": 1,
           "smsp__inst_executed.sum": 1.0}
    frame = schema.conform("counters", pd.DataFrame([row]))
    schema.validate("counters", frame, "c")
    frame["not a metric"] = 1.0
    with pytest.raises(InputError, match="'not a metric' is neither in the counters schema"):
        schema.validate("counters", frame, "c")

"""Datasets: the measured ground truth, its schema and its provenance.

``Dataset`` holds the tables; ``schema`` declares their columns (``data/SCHEMA.md`` is
generated from it); ``write_part`` and ``compact`` are how campaigns commit rows;
``summarize`` says what a dataset holds.
"""

from kerncast.data import schema
from kerncast.data._dataset import (KEY_COLUMNS, TABLES, Dataset, dedupe, read_table_files,
                                    table_files)
from kerncast.data._metrics import METRICS, Metric, metric_names
from kerncast.data._parts import compact, write_part
from kerncast.data._summary import summarize

__all__ = [
    "KEY_COLUMNS",
    "METRICS",
    "TABLES",
    "Dataset",
    "Metric",
    "compact",
    "dedupe",
    "metric_names",
    "read_table_files",
    "schema",
    "summarize",
    "table_files",
    "write_part",
]

"""Datasets: the measured ground truth, its schema and its provenance."""

from kerncast.data._dataset import KEY_COLUMNS, TABLES, Dataset

__all__ = ["KEY_COLUMNS", "TABLES", "Dataset"]

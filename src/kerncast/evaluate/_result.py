"""The result of an evaluation: every prediction and the tables made from them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from kerncast.evaluate._tables import (
    comparison_table,
    group_table,
    kernel_table,
    model_table,
    survey_kernels,
    survey_table,
)

__all__ = ["EvaluationResult"]


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


@dataclass
class EvaluationResult:
    """Everything an evaluation found.

    Attributes
    ----------
    dataset
        Name of the evaluated dataset.
    folds
        How rows were split: ``"kernel"``, a number of folds, or ``"held-out"``.
    models
        Per model: ``needs``, ``learned``, ``description``, ``insight``.
    predictions
        One row per (model, target row): key columns, ``fold``, ``measured_s``,
        ``predicted_s``, ``ape_pct``, ``ok``, ``error``, ``bottleneck``, ``work``.
    calls
        One row per (model, fold, kernel) prediction call: ``rows``, ``predict_s``, ``error``.
    fits
        One row per (model, fold): ``train_rows``, ``fit_s``, ``error``.
    per_model, per_kernel, groups, comparison, survey
        Tables derived from the above (see :mod:`kerncast.evaluate._tables`).
    """

    dataset: str
    folds: str
    models: dict[str, dict[str, Any]]
    predictions: pd.DataFrame
    calls: pd.DataFrame
    fits: pd.DataFrame
    per_model: pd.DataFrame = field(init=False)
    per_kernel: pd.DataFrame = field(init=False)
    groups: pd.DataFrame = field(init=False)
    comparison: pd.DataFrame = field(init=False)
    survey: pd.DataFrame = field(init=False)

    def __post_init__(self) -> None:
        self.groups = group_table(self.predictions)
        self.per_model = model_table(self.predictions, self.groups, self.calls, self.fits,
                                     self.models)
        self.per_kernel = kernel_table(self.predictions, self.groups)
        self.comparison = comparison_table(self.per_model, self.models)
        self.survey = survey_table(self.per_kernel)

    @property
    def kernels(self) -> list[str]:
        return sorted(set(self.predictions["kernel"])) if len(self.predictions) else []

    def survey_kernels(self) -> dict[str, list[str]]:
        """The survey's benchmarks and the evaluated kernels standing for them."""
        return survey_kernels(self.kernels)

    def failures(self) -> pd.DataFrame:
        """One row per (model, kernel) where predictions failed, with the first error."""
        bad = self.per_kernel[self.per_kernel["failed"] > 0]
        return bad[["model", "kernel", "rows", "failed", "error"]].reset_index(drop=True)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (tables as lists of records; not the row predictions)."""
        return {
            "dataset": self.dataset,
            "folds": self.folds,
            "kernels": self.kernels,
            "models": {k: {**v, "needs": sorted(v["needs"])} for k, v in self.models.items()},
            "per_model": _records(self.per_model),
            "comparison": _records(self.comparison),
            "per_kernel": _records(self.per_kernel),
            "survey": _records(self.survey),
            "failures": _records(self.failures()),
        }

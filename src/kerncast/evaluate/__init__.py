"""Evaluation: every model scored by one harness on the same data, splits and metrics.

>>> from kerncast.data import Dataset
>>> from kerncast.evaluate import evaluate
>>> result = evaluate(Dataset.read("data/h100"), ["roofline"])   # doctest: +SKIP
>>> result.per_model                                              # doctest: +SKIP

Metric definitions: :mod:`kerncast.evaluate._metrics`. Reports: :func:`write_report`.
"""

from kerncast.evaluate._harness import (
    REQUIRED_COLUMNS,
    TARGET,
    check_columns,
    evaluate,
    hide_targets,
    predict_rows,
    resolve_models,
    select,
    unmet_needs,
)
from kerncast.evaluate._metrics import (
    GROUP_COLUMNS,
    ape_pct,
    error_summary,
    spearman,
    top1_regret_pct,
)
from kerncast.evaluate._result import EvaluationResult
from kerncast.evaluate._splits import Fold, kernel_folds
from kerncast.evaluate._tables import SURVEY_BENCHMARKS, survey_kernels
# matplotlib loads only when a figure is drawn (_figures imports it on use)
from kerncast.evaluate._figures import roofline_figure
from kerncast.evaluate._report import LABELS, format_value, write_report

__all__ = [
    "GROUP_COLUMNS",
    "LABELS",
    "REQUIRED_COLUMNS",
    "SURVEY_BENCHMARKS",
    "TARGET",
    "EvaluationResult",
    "Fold",
    "ape_pct",
    "check_columns",
    "error_summary",
    "evaluate",
    "format_value",
    "hide_targets",
    "kernel_folds",
    "predict_rows",
    "resolve_models",
    "roofline_figure",
    "select",
    "spearman",
    "survey_kernels",
    "top1_regret_pct",
    "unmet_needs",
    "write_report",
]


"""Tables of an evaluation: per model, per kernel, per launch-configuration group, the
survey's comparison (its Table 2 with measured numbers) and the survey's kernels."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from kerncast.evaluate._metrics import (
    GROUP_COLUMNS,
    MIN_REGRET_CONFIGS,
    error_summary,
    spearman,
    top1_regret_pct,
)
from kerncast.models import NEEDS
from kerncast.corpus import get_kernel

__all__ = [
    "MEASURED_NEEDS",
    "SURVEY_BENCHMARKS",
    "comparison_table",
    "group_table",
    "kernel_table",
    "model_table",
    "survey_kernels",
    "survey_table",
]

#: Needs that mean running something (the survey's "construction effort").
MEASURED_NEEDS = {
    "sampled_runs": "sampled runs on the GPU",
    "counters": "hardware counters",
    "base_config_run": "a base-configuration run",
    "cpu_code": "a profile of the CPU code",
}
#: The survey's three benchmarks: label -> (corpus tag, words in names that mark them).
SURVEY_BENCHMARKS = {
    "MM": ("survey-mm", ()),
    "HotSpot": ("survey-hotspot", ("hotspot",)),
    "BFS": ("survey-bfs", ("bfs",)),
}


def _median(values: list[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return float(np.median(finite)) if finite else math.nan


def _mean(values: list[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return float(np.mean(finite)) if finite else math.nan


def _first_error(frame: pd.DataFrame) -> str:
    errors = frame.loc[~frame["ok"], "error"].dropna()
    return str(errors.iloc[0]) if len(errors) else ""


def group_table(predictions: pd.DataFrame) -> pd.DataFrame:
    """Spearman and top-1 regret per (model, kernel, language, size, device, SM count)."""
    cols = ["model", *[c for c in GROUP_COLUMNS if c in predictions]]
    rows = []
    for key, grp in predictions.groupby(cols, sort=True, dropna=False):
        ok = grp[grp["ok"]]
        best = float(grp["measured_s"].min())
        rho = spearman(ok["measured_s"], ok["predicted_s"])
        regret = (top1_regret_pct(ok["measured_s"], ok["predicted_s"], best)
                  if len(ok) >= MIN_REGRET_CONFIGS else math.nan)
        rows.append({**dict(zip(cols, key)), "configs": len(grp), "predicted": len(ok),
                     "spearman": rho, "regret_pct": regret})
    return pd.DataFrame(rows, columns=[*cols, "configs", "predicted", "spearman", "regret_pct"])


def _scores(pred: pd.DataFrame, groups: pd.DataFrame) -> dict[str, Any]:
    ok = pred[pred["ok"]]
    per_kernel_rho = [_median(list(g["spearman"])) for _, g in groups.groupby("kernel")]
    return {
        "rows": len(pred), "predicted": len(ok), "failed": int((~pred["ok"]).sum()),
        **error_summary(ok["ape_pct"].to_numpy()),
        "spearman": _median(per_kernel_rho),
        "regret_pct": _mean(list(groups["regret_pct"])),
    }


def model_table(predictions: pd.DataFrame, groups: pd.DataFrame, calls: pd.DataFrame,
                fits: pd.DataFrame, models: dict[str, dict]) -> pd.DataFrame:
    """One row per model: accuracy, ranking, speed and failures.

    ``s_per_prediction`` is the wall time of the prediction calls that succeeded over the
    rows they predicted (calls are per held-out kernel); ``fit_s`` is the mean fit time
    per fold and ``fit_s_total`` their sum.
    """
    rows = []
    for name in models:
        pred = predictions[predictions["model"] == name]
        scores = _scores(pred, groups[groups["model"] == name])
        call = calls[(calls["model"] == name) & calls["error"].isna()] if len(calls) else calls
        fit = fits[fits["model"] == name]
        failed_kernels = sorted(set(pred.loc[~pred["ok"], "kernel"]))
        rows.append({
            "model": name, **scores,
            "s_per_prediction": (float(call["predict_s"].sum() / call["rows"].sum())
                                 if len(call) and call["rows"].sum() else math.nan),
            "fit_s": float(fit["fit_s"].mean()) if len(fit) else math.nan,
            "fit_s_total": float(fit["fit_s"].sum()) if len(fit) else math.nan,
            "failed_kernels": len(failed_kernels),
            "error": _first_error(pred) if len(pred) else "",
        })
    return pd.DataFrame(rows)


def kernel_table(predictions: pd.DataFrame, groups: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, kernel), with the first error where the model failed."""
    rows = []
    for (model, kernel), pred in predictions.groupby(["model", "kernel"], sort=True):
        grp = groups[(groups["model"] == model) & (groups["kernel"] == kernel)]
        ok = pred[pred["ok"]]
        bottleneck = Counter(ok["bottleneck"].dropna()).most_common(1)
        rows.append({
            "model": model, "kernel": kernel, "rows": len(pred), "failed": int((~pred["ok"]).sum()),
            **error_summary(ok["ape_pct"].to_numpy()),
            "spearman": _median(list(grp["spearman"])), "regret_pct": _mean(list(grp["regret_pct"])),
            "bottleneck": bottleneck[0][0] if bottleneck else "",
            "error": _first_error(pred),
        })
    return pd.DataFrame(rows)


def must_measure(info: dict) -> str:
    """What a user must run to build and use the model (the survey's construction effort)."""
    items = [MEASURED_NEEDS[n] for n in sorted(info["needs"]) if n in MEASURED_NEEDS]
    if info["learned"]:
        items.insert(0, "times of training kernels")
    return ", ".join(items) or "nothing"


def comparison_table(per_model: pd.DataFrame, models: dict[str, dict]) -> pd.DataFrame:
    """The survey's Table 2 with measured numbers in place of Low/Moderate/High."""
    rows = []
    for rec in per_model.to_dict("records"):
        info = models[rec["model"]]
        rows.append({
            "model": rec["model"],
            "accuracy_mape_pct": rec["mape_pct"],
            "accuracy_within_25_pct": rec["within_25_pct"],
            "construction_fit_s": rec["fit_s"],
            "construction_must_measure": must_measure(info),
            "evaluation_s_per_prediction": rec["s_per_prediction"],
            "needs": ", ".join(NEEDS[n] for n in sorted(info["needs"])) or "the launch only",
            "insight": info["insight"],
        })
    return pd.DataFrame(rows)


def _benchmark_of(kernel: str) -> str | None:
    try:
        spec = get_kernel(kernel)
        tags, names = set(spec.spec.tags), f"{kernel} {spec.app.name}".lower()
    except Exception:  # not a corpus kernel: go by its name
        tags, names = set(), kernel.lower()
    for label, (tag, words) in SURVEY_BENCHMARKS.items():
        if tag in tags or any(w in names for w in words):
            return label
    return None


def survey_kernels(kernels: list[str]) -> dict[str, list[str]]:
    """The survey's benchmarks (MM, HotSpot, BFS) -> the given kernels that stand for them."""
    found: dict[str, list[str]] = {label: [] for label in SURVEY_BENCHMARKS}
    for kernel in sorted(kernels):
        label = _benchmark_of(kernel)
        if label:
            found[label].append(kernel)
    return found


def survey_table(per_kernel: pd.DataFrame) -> pd.DataFrame:
    """Each model's error on the survey's kernels, benchmark by benchmark."""
    cols = ["benchmark", "kernel", "model", "rows", "failed", "mape_pct", "within_25_pct",
            "spearman", "error"]
    if per_kernel.empty:
        return pd.DataFrame(columns=cols)
    found = survey_kernels(sorted(set(per_kernel["kernel"])))
    rows = []
    for label, kernels in found.items():
        for kernel in kernels:
            for rec in per_kernel[per_kernel["kernel"] == kernel].to_dict("records"):
                rows.append({"benchmark": label, **{c: rec[c] for c in cols[1:]}})
    return pd.DataFrame(rows, columns=cols)

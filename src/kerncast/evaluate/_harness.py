"""The evaluation harness: every model scored on the same rows, splits and metrics.

Rows are split by kernel (no kernel on both sides of a split), every model is cloned,
fitted on the training kernels (models that learn nothing too, for uniformity) and asked
to predict each held-out kernel separately, with the measured times removed from what it
sees (columns of ``times`` starting with ``time_``); the other tables (sampled runs,
counters, ...) stay, since they are inputs a user would have. A model that raises on a
kernel, or fails to fit, is recorded as failing there and the evaluation goes on.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from kerncast._errors import InputError
from kerncast.data import KEY_COLUMNS, Dataset
from kerncast.evaluate._metrics import ape_pct
from kerncast.evaluate._result import EvaluationResult
from kerncast.evaluate._splits import Fold, kernel_folds
from kerncast.models import Prediction, Predictor, get_predictor, list_predictors

__all__ = ["REQUIRED_COLUMNS", "TARGET", "evaluate", "hide_targets", "select"]

TARGET = "time_median_s"
#: Columns of ``times`` that the harness itself reads.
REQUIRED_COLUMNS = ("kernel", "size", "config", "status", TARGET)
#: Tables a need is served by (checked per kernel before a model predicts it).
NEED_TABLES = {"sampled_runs": "samples", "counters": "counters", "cpu_code": "cpu"}
Progress = Callable[[int, int, str], None]


def evaluate(dataset: Dataset, models: Iterable[str | Predictor] | str = "all", *,
             kernels: Iterable[str] | None = None, sizes: Iterable[str] | None = None,
             folds: str | int = "kernel", test: Dataset | None = None,
             progress: Progress | None = None, executor: Any = None) -> EvaluationResult:
    """Score ``models`` on ``dataset``.

    Parameters
    ----------
    dataset
        The measured data (its ``status == "ok"`` rows with a positive time are targets).
    models
        ``"all"``, registry names, or :class:`Predictor` instances (cloned, never changed).
    kernels, sizes
        Restrict the evaluation to these kernels and problem sizes.
    folds
        ``"kernel"`` (leave one kernel out) or a number of folds by kernel.
    test
        A held-out test dataset: fit on all of ``dataset``, predict ``test``.
    progress
        Called as ``progress(done, total, label)`` after each step.
    executor
        A :mod:`kerncast.execute` executor: each model's folds are fitted and predicted on
        its workers (default: here, one after the other). The results are the same.

    Raises
    ------
    InputError
        For an empty selection, missing columns, unknown models, kernels or sizes.
    """
    predictors = resolve_models(models)
    data = select(dataset, kernels, sizes)
    check_columns(data, predictors)
    if test is None:
        plan = [(fold, data) for fold in kernel_folds(data.kernels(), folds)]
        split = str(folds)
    else:
        target = select(test, kernels, sizes)
        check_columns(target, predictors)
        plan = [(Fold("held-out", tuple(data.kernels()), tuple(target.kernels())), target)]
        split = "held-out"
    runs = _Runs(progress, total=len(predictors) * sum(len(f.test) + 1 for f, _ in plan))
    if executor is None or executor.name == "serial":
        for model in predictors:
            for fold, source in plan:
                runs.fold(model, fold, data, source)
    else:
        _fanned(runs, executor, predictors, plan, data)
    return runs.result(dataset.name or "dataset", split, predictors)


def _fanned(runs: _Runs, executor: Any, predictors: list[Predictor], plan: list,
            data: Dataset) -> None:
    """Every (model, fold) on ``executor``'s workers, merged in the serial order; a fold
    whose worker failed is recorded as failed on each of its kernels. The folds with the
    most rows to predict go first, so that no long one is left to run alone at the end."""
    from kerncast.execute import Failed  # noqa: PLC0415 (only where the work fans out)

    units = [(model, fold, i) for model in predictors for i, (fold, _) in enumerate(plan)]
    order = sorted(range(len(units)), key=lambda i: -_rows_of(plan[units[i][2]][1], units[i][1]))
    done: dict[int, Any] = {}
    for position, result in executor.map(_fold_unit, [units[i] for i in order],
                                         (data, [s for _, s in plan])):
        index = order[position]
        model, fold, source = units[index]
        if isinstance(result, Failed):
            part = _Runs(None, 0)
            part.failed_fold(model, fold, plan[source][1], result.error)
            result = (part.rows, part.calls, part.fits)
        done[index] = result
        runs.advance(len(fold.test) + 1, f"{model.name}: {fold.name}")
    for index in sorted(done):
        rows, calls, fits = done[index]
        runs.rows += rows
        runs.calls += calls
        runs.fits += fits


def _rows_of(source: Dataset, fold: Fold) -> int:
    """How many of ``source``'s rows ``fold`` predicts."""
    counts = source.times["kernel"].value_counts()
    return int(sum(counts.get(k, 0) for k in fold.test))


def _fold_unit(shared: tuple, unit: tuple) -> tuple[list, list, list]:
    """One model's fit and predictions on one fold (in a worker)."""
    data, sources = shared
    model, fold, source = unit
    part = _Runs(None, 0)
    part.fold(model, fold, data, sources[source])
    return part.rows, part.calls, part.fits


def resolve_models(models: Iterable[str | Predictor] | str) -> list[Predictor]:
    """Predictor instances for ``"all"``, names (comma-separated allowed) or instances."""
    if isinstance(models, str):
        models = [m for m in models.split(",") if m.strip()]
    items: list[Predictor] = []
    for model in models:
        if isinstance(model, Predictor):
            items.append(model)
        elif str(model).strip().lower() == "all":
            items.extend(get_predictor(n) for n in list_predictors())
        else:
            items.append(get_predictor(str(model).strip()))
    if not items:
        raise InputError(f"no models given; choose from: {', '.join(list_predictors())} or 'all'")
    names = [m.name for m in items]
    if len(set(names)) != len(names):
        raise InputError(f"model names repeat in {names}; give each model once")
    return items


def select(dataset: Dataset, kernels: Iterable[str] | None = None,
           sizes: Iterable[str] | None = None) -> Dataset:
    """``dataset`` restricted to ``kernels`` and ``sizes``, checked for usable rows."""
    name = dataset.name or "the dataset"
    times = dataset.times
    if len(times) == 0 or "kernel" not in times:
        raise InputError(f"{name} has no timing rows; measure kernels first (kerncast measure)")
    data = dataset
    if kernels is not None:
        wanted = _listed(kernels)
        absent = [k for k in wanted if k not in set(times["kernel"])]
        if absent:
            raise InputError(f"kernel(s) {', '.join(absent)} not in {name}; it has: "
                             f"{', '.join(dataset.kernels())}")
        data = data.subset(wanted)
    if sizes is not None:
        data = _keep_sizes(data, _listed(sizes), name)
    return data


def _listed(values: Iterable[str]) -> list[str]:
    if isinstance(values, str):
        values = [values]
    return [v.strip() for item in values for v in str(item).split(",") if v.strip()]


def _keep_sizes(data: Dataset, sizes: list[str], name: str) -> Dataset:
    if "size" not in data.times:
        raise InputError(f"{name} has no 'size' column, so --sizes cannot select rows")
    have = sorted(set(data.times["size"].astype(str)))
    absent = [s for s in sizes if s not in have]
    if absent:
        raise InputError(f"size(s) {', '.join(absent)} not in {name}; it has: {', '.join(have)}")
    return replace(data, times=data.times[data.times["size"].astype(str).isin(sizes)]
                   .reset_index(drop=True))


def check_columns(data: Dataset, predictors: list[Predictor]) -> None:
    """Raise :class:`InputError` if ``times`` lacks columns the harness or a model reads."""
    name = data.name or "the dataset"
    need = dict.fromkeys(REQUIRED_COLUMNS)
    for model in predictors:
        need.update(dict.fromkeys(model.columns))
    missing = [c for c in need if c not in data.times]
    if missing:
        raise InputError(f"{name} lacks the column(s) {', '.join(missing)} in its times table, "
                         "which evaluation needs; use a dataset written by kerncast measure")
    if not len(_targets(data.times)):
        raise InputError(f"{name} has no successful timing rows (status 'ok' with a positive "
                         f"{TARGET}) in the selection; nothing to evaluate")


def _targets(times: pd.DataFrame) -> pd.DataFrame:
    t = times[(times["status"] == "ok") & np.isfinite(times[TARGET].astype(float))]
    return t[t[TARGET] > 0].reset_index(drop=True)


def hide_targets(data: Dataset, kernel: str) -> tuple[Dataset, pd.DataFrame]:
    """The rows of ``kernel`` to predict, without their measured times, and those rows."""
    part = data.subset([kernel])
    rows = _targets(part.times)
    shown = rows.drop(columns=[c for c in rows if str(c).startswith("time_")])
    return replace(part, times=shown), rows


class _Runs:
    """Collects predictions, calls and fits while the harness runs."""

    def __init__(self, progress: Progress | None, total: int):
        self.progress, self.total, self.done = progress, total, 0
        self.rows: list[pd.DataFrame] = []
        self.calls: list[dict[str, Any]] = []
        self.fits: list[dict[str, Any]] = []

    def _step(self, label: str) -> None:
        self.advance(1, label)

    def advance(self, steps: int, label: str) -> None:
        self.done += steps
        if self.progress is not None:
            self.progress(self.done, self.total, label)

    def failed_fold(self, model: Predictor, fold: Fold, source: Dataset, error: str) -> None:
        """A fold whose worker failed: the fit and every kernel recorded with ``error``."""
        self.fits.append({"model": model.name, "fold": fold.name, "train_rows": 0,
                          "fit_s": 0.0, "error": f"worker failed: {error}"})
        for kernel in fold.test:
            self._predict(model, fold.name, kernel, source, f"worker failed: {error}")

    def fold(self, model: Predictor, fold: Fold, data: Dataset, source: Dataset) -> None:
        estimator = clone(model)
        train = data.subset(list(fold.train))
        fit_error = _timed_fit(estimator, train, self.fits, fold.name)
        self._step(f"{model.name}: fit {fold.name}")
        for kernel in fold.test:
            self._predict(estimator, fold.name, kernel, source, fit_error)
            self._step(f"{model.name}: {kernel}")

    def _predict(self, model: Predictor, fold: str, kernel: str, source: Dataset,
                 fit_error: str | None) -> None:
        shown, rows = hide_targets(source, kernel)
        error, seconds, explained, elapsed = fit_error, None, None, 0.0
        if error is None:
            error = unmet_needs(model, source, kernel)
        if error is None:
            start = time.perf_counter()
            try:
                seconds, explained = predict_rows(model, shown)
            except Exception as exc:  # a model's failure on a kernel is data
                error = f"{type(exc).__name__}: {exc}"
            elapsed = time.perf_counter() - start
        self.calls.append({"model": model.name, "fold": fold, "kernel": kernel,
                           "rows": len(rows), "predict_s": elapsed, "error": error})
        self.rows.append(_prediction_rows(model.name, fold, rows, seconds, explained, error))

    def result(self, dataset: str, split: str, models: list[Predictor]) -> EvaluationResult:
        info = {m.name: {"needs": m.needs, "learned": m.learned, "description": m.description,
                         "insight": m.insight, "params": m.get_params(deep=False)}
                for m in models}
        predictions = (pd.concat(self.rows, ignore_index=True) if self.rows
                       else pd.DataFrame(columns=_PREDICTION_COLUMNS))
        return EvaluationResult(dataset=dataset, folds=split, models=info,
                                predictions=predictions, calls=pd.DataFrame(self.calls),
                                fits=pd.DataFrame(self.fits))


def _timed_fit(model: Predictor, train: Dataset, fits: list, fold: str) -> str | None:
    start = time.perf_counter()
    error = None
    try:
        model.fit(train)
    except Exception as exc:  # recorded; the model fails on every kernel of the fold
        error = f"fit failed: {type(exc).__name__}: {exc}"
    fits.append({"model": model.name, "fold": fold, "train_rows": len(train.times),
                 "fit_s": time.perf_counter() - start, "error": error})
    return error


def unmet_needs(model: Predictor, data: Dataset, kernel: str) -> str | None:
    """Why ``data`` cannot serve ``model`` for ``kernel`` (None if it can, as far as known)."""
    for need in sorted(model.needs):
        table = NEED_TABLES.get(need)
        if table is None:
            continue
        frame = getattr(data, table)
        if len(frame) == 0 or "kernel" not in frame or not (frame["kernel"] == kernel).any():
            return (f"needs {need}: the dataset's {table} table has no rows for {kernel}; "
                    "measure them first")
    return None


def predict_rows(model: Predictor, shown: Dataset) -> tuple[np.ndarray, list[Prediction] | None]:
    """Predicted seconds (and explanations where the model gives them) for ``shown``."""
    if model.explains_rows:
        explained = model.explain(shown)
        if len(explained) != len(shown.times):
            raise ValueError(f"{model.name} explained {len(explained)} of {len(shown.times)} rows")
        return np.array([p.seconds for p in explained], dtype=float), explained
    return model.predict(shown), None


_PREDICTION_COLUMNS = ["model", "fold", *KEY_COLUMNS, "measured_s", "predicted_s", "ape_pct",
                       "ok", "error", "bottleneck", "work"]


def _prediction_rows(model: str, fold: str, rows: pd.DataFrame, seconds: np.ndarray | None,
                     explained: list[Prediction] | None, error: str | None) -> pd.DataFrame:
    keys = [c for c in KEY_COLUMNS if c in rows]
    out = rows[keys].copy()
    out.insert(0, "fold", fold)
    out.insert(0, "model", model)
    out["measured_s"] = rows[TARGET].astype(float).to_numpy()
    predicted = np.full(len(rows), math.nan) if seconds is None else np.asarray(seconds, float)
    good = np.isfinite(predicted) & (predicted > 0)
    out["predicted_s"] = predicted
    out["ape_pct"] = np.where(good, ape_pct(out["measured_s"].to_numpy(), predicted), math.nan)
    out["ok"] = good
    bad_value = "no usable prediction (NaN, infinite or not positive)"
    out["error"] = [None if ok else (error or bad_value) for ok in good]
    out["bottleneck"] = [p.bottleneck for p in explained] if explained else None
    out["work"] = [str(p.based_on["work"]) if p.based_on.get("work") else None
                   for p in explained] if explained else None
    return out

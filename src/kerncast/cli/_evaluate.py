"""``kerncast evaluate`` and ``kerncast report``: score models on a measured dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kerncast._errors import InputError
from kerncast.cli._app import app
from kerncast.cli._fanout import AddressOpt, ExecutorOpt, WorkersOpt, executor_of
from kerncast.cli._output import console, print_json, progress, writable_dir

JsonOpt = Annotated[bool, typer.Option("--json", help="Write JSON for scripts.")]
DatasetOpt = Annotated[Path, typer.Option("--dataset", "-d", help="Dataset directory "
                                          "(or a times.parquet file).")]
ModelsOpt = Annotated[str, typer.Option("--models", "-m", help="Comma-separated model names, "
                                        "or 'all'.")]
KernelsOpt = Annotated[list[str] | None, typer.Option(
    "--kernels", "-k", help="Only these kernels (comma-separated or repeated).")]
SizesOpt = Annotated[list[str] | None, typer.Option(
    "--sizes", help="Only these problem sizes (comma-separated or repeated).")]
FoldsOpt = Annotated[str, typer.Option("--folds", help="'kernel' (leave one kernel out) or a "
                                       "number of folds by kernel.")]
TestOpt = Annotated[Path | None, typer.Option("--test", help="A held-out test dataset: fit on "
                                              "--dataset, score on this one.")]

_MODEL_COLUMNS = ("model", "rows", "failed", "mape_pct", "median_ape_pct", "p90_ape_pct",
                  "within_10_pct", "within_25_pct", "spearman", "regret_pct",
                  "s_per_prediction", "fit_s")
_TEXT_COLUMNS = ("model", "kernel", "error", "needs", "insight", "bottleneck",
                 "construction_must_measure")
_KERNEL_COLUMNS = ("kernel", "model", "rows", "failed", "mape_pct", "within_25_pct",
                   "spearman", "regret_pct", "bottleneck", "error")


def _run(dataset: Path, models: str, kernels, sizes, folds: str, test: Path | None, quiet: bool,
         executor: Any = None, base_dataset: Path | None = None):
    from kerncast.data import Dataset  # noqa: PLC0415  (pandas: not on every command)
    from kerncast.evaluate import evaluate  # noqa: PLC0415 (CLI start-up: evaluate is heavy)

    chosen = _with_base_dataset(models, base_dataset)
    data = Dataset.read(dataset)
    held_out = Dataset.read(test) if test is not None else None
    fold_arg: str | int = int(folds) if folds.strip().isdigit() else folds
    with progress("evaluating", quiet) as step:
        return evaluate(data, chosen, kernels=kernels, sizes=sizes, folds=fold_arg,
                        test=held_out, progress=step, executor=executor)


def _with_base_dataset(models: str, base_dataset: Path | None) -> Any:
    """``models``, with ``base_dataset`` given to each that predicts from a base run on
    another GPU (a ``base_dataset`` parameter); an input error where none of them does."""
    if base_dataset is None:
        return models
    from kerncast.evaluate import resolve_models  # noqa: PLC0415 (CLI start-up: evaluate is heavy)

    if not base_dataset.is_dir():
        raise InputError(f"--base-dataset {base_dataset} is not a dataset directory; give the "
                         "base GPU's measurements, e.g. --base-dataset data/h100")
    chosen = resolve_models(models)
    takers = [m for m in chosen if "base_dataset" in m.get_params()]
    if not takers:
        raise InputError("--base-dataset is read only by models that predict from a base run on "
                         "another GPU (scaling-surfaces); add one to --models or leave it out")
    for model in takers:
        model.set_params(base_dataset=str(base_dataset))
    return chosen


def _table(frame, columns, title: str) -> Table:
    from kerncast.evaluate import LABELS, format_value  # noqa: PLC0415 (CLI start-up: evaluate)

    table = Table(title=title, title_justify="left")
    cols = [c for c in columns if c in frame]
    for col in cols:
        text = col in _TEXT_COLUMNS
        table.add_column(LABELS.get(col, col), justify="left" if text else "right",
                         overflow="fold", ratio=3 if text else 1)
    for rec in frame.to_dict("records"):
        table.add_row(*(_short(format_value(c, rec[c])) for c in cols))
    return table


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _print(result, report: Path | None) -> None:
    console.print(_table(result.per_model, _MODEL_COLUMNS,
                         f"{result.dataset}: {_count(len(result.kernels), 'kernel')}, "
                         f"split {result.folds}"))
    console.print(_table(result.comparison, tuple(result.comparison.columns),
                         "the survey's comparison, measured"))
    console.print(_table(result.per_kernel, _KERNEL_COLUMNS, "per kernel"))
    for label, kernels in result.survey_kernels().items():
        console.print(f"survey {label}: {', '.join(kernels) if kernels else 'not in this dataset'}")
    if report is not None:
        console.print(f"report: {report}")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _report_dir(dataset: Path, out: Path | None) -> Path:
    name = dataset.stem if dataset.is_file() else dataset.resolve().name
    return out if out is not None else Path("reports") / name


@app.command("evaluate")
def evaluate_cmd(
    dataset: DatasetOpt,
    models: ModelsOpt = "all",
    kernels: KernelsOpt = None,
    sizes: SizesOpt = None,
    folds: FoldsOpt = "kernel",
    test: TestOpt = None,
    report: Annotated[Path | None, typer.Option(
        "--report", help="Also write the HTML report into this directory "
        "(e.g. reports/<dataset-name>/).")] = None,
    executor: ExecutorOpt = "serial",
    workers: WorkersOpt = None,
    address: AddressOpt = None,
    base_dataset: Annotated[Path | None, typer.Option(
        "--base-dataset", help="The base GPU's dataset (e.g. data/h100) for the models that "
        "predict another GPU's launches from a base run (scaling-surfaces).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Score models on a measured dataset: accuracy, ranking of launch configurations, speed.

    Example: kerncast evaluate --dataset data/h100 --models roofline --report reports/h100
    """
    runner = executor_of(executor, workers, address)
    if report is not None:
        writable_dir(report)  # before the evaluation, which takes long
    result = _run(dataset, models, kernels, sizes, folds, test, quiet=as_json,
                  executor=runner, base_dataset=base_dataset)
    index = None
    if report is not None:
        from kerncast.evaluate import write_report  # noqa: PLC0415 (CLI start-up: evaluate is heavy)

        index = write_report(result, report)
    if as_json:
        print_json({**result.to_dict(), "report": str(index) if index else None})
        return
    _print(result, index)


@app.command("report")
def report_cmd(
    dataset: DatasetOpt,
    models: ModelsOpt = "all",
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Directory for index.html and figures (default "
        "reports/<dataset-name>/).")] = None,
    kernels: KernelsOpt = None,
    sizes: SizesOpt = None,
    folds: FoldsOpt = "kernel",
    test: TestOpt = None,
    executor: ExecutorOpt = "serial",
    workers: WorkersOpt = None,
    address: AddressOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Evaluate models and write the HTML report (tables and figures).

    Example: kerncast report --dataset data/h100 --models all --out reports/h100
    """
    from kerncast.evaluate import write_report  # noqa: PLC0415 (CLI start-up: evaluate is heavy)

    runner = executor_of(executor, workers, address)
    folder = writable_dir(_report_dir(dataset, out))  # before the evaluation, which takes long
    result = _run(dataset, models, kernels, sizes, folds, test, quiet=as_json,
                  executor=runner)
    index = write_report(result, folder)
    if as_json:
        print_json({"report": str(index), "dataset": result.dataset,
                    "models": list(result.models), "kernels": result.kernels})
        return
    console.print(f"report: {index}")

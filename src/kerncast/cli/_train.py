"""``kerncast train``: fit a learned model on a whole dataset and save it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kerncast._errors import InputError
from kerncast.cli._app import app
from kerncast.cli._output import console, print_json, writable_parent


@app.command("train")
def train_cmd(
    model: Annotated[str, typer.Argument(help="A learned model, e.g. sampling-svr.")],
    dataset: Annotated[Path, typer.Option("--dataset", "-d", help="Dataset directory.")],
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Where to write the model (default: the shipped model's "
        "file, kerncast/models/trained/<model>-<dataset>.json).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Write JSON for scripts.")] = False,
) -> None:
    """Fit a learned model on every row of a dataset and save it as JSON.

    Scores come from 'kerncast evaluate' (cross-validation by kernel); this trains the
    model that is used afterwards.

    Example: kerncast train sampling-svr --dataset data/h100
    """
    from kerncast.data import Dataset  # noqa: PLC0415  (pandas: not on every command)
    from kerncast.models import train, trained_path  # noqa: PLC0415 (CLI start-up: models is heavy)

    if out is not None:
        writable_parent(out)  # before the fit, which takes long
    data = Dataset.read(dataset)
    if data.ok_times().empty:
        raise InputError(f"{dataset} has no measured rows (status ok) to train on; measure "
                         "some first (kerncast measure corpus) or give another dataset "
                         "(kerncast data summary lists them)")
    fitted = train(model, data)
    kernels = len(getattr(fitted, "trained_kernels_", None) or
                  set(data.ok_times()["kernel"]))
    if not kernels:
        raise InputError(f"{fitted.name} found no kernel to learn from in {dataset}; give a "
                         "dataset with measured rows it can use")
    target = out if out is not None else trained_path(fitted.name, Path(dataset).resolve().name)
    writable_parent(target)
    fitted.save(target)
    summary = {"model": fitted.name, "dataset": str(dataset), "kernels": kernels,
               "out": str(target), "params": getattr(fitted, "best_params_", {})}
    if as_json:
        print_json(summary)
        return
    console.print(f"{fitted.name}: trained on {kernels} kernels of {dataset}; written to {target}")
    if summary["params"]:
        console.print(f"hyper-parameters (inner cross-validation by kernel): {summary['params']}")

"""``kerncast predict`` and ``kerncast sweep``."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from kerncast._errors import InputError
from kerncast.cli._app import app
from kerncast.cli._output import console, err_console, print_json

JsonOpt = Annotated[bool, typer.Option("--json", help="Write JSON for scripts.")]
DeviceOpt = Annotated[str, typer.Option("--device", "-d", help="Device name or alias.")]
SizeOpt = Annotated[str, typer.Option("--size", "-s", help="Problem size: small, medium, large.")]
LangOpt = Annotated[str, typer.Option("--lang", help="cuda or opencl.")]


def _tunables(config: list[str] | None) -> dict[str, int]:
    out = {}
    for item in config or []:
        name, sep, value = item.partition("=")
        if not sep:
            raise InputError(f"--config {item!r} is not NAME=VALUE; e.g. --config tile=32")
        try:
            out[name.strip()] = int(value)
        except ValueError:
            raise InputError(f"--config {item!r}: {value!r} is not an integer") from None
    return out


def _fmt(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "-"
    return f"{seconds * 1e6:.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.3f} ms"


@app.command("predict")
def predict_cmd(
    kernel: Annotated[str, typer.Argument(help="corpus:NAME, NAME, or DIR:NAME (own spec).")],
    device: DeviceOpt = "h100",
    size: SizeOpt = "large",
    config: Annotated[list[str] | None, typer.Option(
        "--config", "-c", help="Tunable NAME=VALUE (repeatable), e.g. --config tile=32.")] = None,
    model: Annotated[str, typer.Option(
        help="static (no GPU), or sampling / seed-linear / sampling-svr (runs sampled "
             "launches; sampling-svr also profiles one with Nsight Compute).")] = "static",
    backend: Annotated[str, typer.Option(
        help="For live sampling: cupy (NVIDIA GPU) or pocl (this CPU).")] = "cupy",
    lang: LangOpt = "cuda",
    sm_count: Annotated[int | None, typer.Option(help="Predict for this many SMs.")] = None,
    budget: Annotated[float | None, typer.Option(
        help="For --model sampling: the share of the predicted launch the samples may take "
             "(default 0.1; larger is more accurate, smaller cheaper).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Predict how long one kernel launch takes, with a breakdown and its bottleneck.

    Example: kerncast predict corpus:matmul_tiled --device h100 --size large --config tile=32
    """
    from kerncast.models import predict  # noqa: PLC0415

    with console.status("predicting", spinner="dots") if not as_json else _null() as status:
        p = predict(kernel, device=device, size=size, tunables=_tunables(config), model=model,
                    language=lang, sm_count=sm_count, backend=backend, budget=budget,
                    progress=getattr(status, "update", None))
    if as_json:
        print_json(p.to_dict())
        return
    console.print(f"[bold]{kernel}[/] on {p.based_on.get('device', device)} ({model}): "
                  f"[bold]{_fmt(p.seconds)}[/], bottleneck: {p.bottleneck}")
    if p.breakdown:
        table = Table(title="where the time goes", title_justify="left")
        table.add_column("part")
        table.add_column("time", justify="right")
        for part, value in p.breakdown.items():
            table.add_row(part, _fmt(value))
        console.print(table)
    basis = {k: v for k, v in p.based_on.items() if not isinstance(v, dict)}
    console.print("based on: " + ", ".join(f"{k}={v}" for k, v in basis.items()))
    if p.based_on.get("adapted_from"):
        console.print(f"note: {p.based_on['device']} has no calibration of its own; the "
                      f"calibration of {p.based_on['adapted_from']} was adapted to its spec")
    if note := _straggler_note(p.seconds, p.based_on.get("straggler")):
        console.print(note)
    if p.based_on.get("warning"):
        err_console.print(f"warning: {p.based_on['warning']}")


def _straggler_note(seconds: float, straggler: dict | None) -> str | None:
    """A note where one thread's data-dependent loop sets most of the predicted time."""
    if not straggler or straggler["seconds"] < 0.5 * seconds:
        return None
    return (f"note: one thread's loop runs {straggler['trips']:,} iterations (the longest range "
            f"in {straggler['offsets']}; the emulated blocks ran at most "
            f"{straggler['traced_trips']:,}) and takes {_fmt(straggler['seconds'])} alone")


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@app.command("sweep")
def sweep_cmd(
    kernel: Annotated[str, typer.Argument(help="corpus:NAME, NAME, or DIR:NAME (own spec).")],
    device: DeviceOpt = "h100",
    size: SizeOpt = "large",
    lang: LangOpt = "cuda",
    csv_out: Annotated[Path | None, typer.Option("--csv", help="Also write the ranking as CSV.")] = None,
    top: Annotated[int, typer.Option(help="Rows to show (all go to --csv/--json).")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Predict every launch configuration of a kernel statically and rank them.

    Example: kerncast sweep corpus:matmul_regblock --device h100 --csv ranking.csv
    """
    from kerncast.models import sweep  # noqa: PLC0415

    columns = [BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=err_console, disable=as_json) as bar:
        task = bar.add_task("sweep", total=None)
        rows = sweep(kernel, device=device, size=size, language=lang,
                     progress=lambda done, total: bar.update(task, completed=done, total=total))
    if csv_out is not None:
        with open(csv_out, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=["rank", "config", "seconds", "bottleneck",
                                                   "grid", "block", "error"])
            writer.writeheader()
            for i, r in enumerate(rows, 1):
                writer.writerow({"rank": i, **{k: r[k] for k in writer.fieldnames if k != "rank"}})
    if as_json:
        print_json(rows)
        return
    table = Table(title=f"{kernel} on {device}, size {size}: {len(rows)} configurations",
                  title_justify="left")
    for col in ("rank", "configuration", "predicted", "vs best", "bottleneck"):
        table.add_column(col, justify="right" if col in ("rank", "predicted", "vs best") else "left")
    best = rows[0]["seconds"] if rows else 0
    for i, r in enumerate(rows[:top], 1):
        ratio = f"{r['seconds'] / best:.2f}x" if best and r["seconds"] != float("inf") else "-"
        table.add_row(str(i), r["config"], _fmt(r["seconds"]), ratio, r["bottleneck"] or r["error"][:40])
    console.print(table)

"""``kerncast data summary`` and ``kerncast data compact``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from kerncast._errors import InputError
from kerncast.cli._app import app
from kerncast.cli._output import console, err_console, print_json

data_app = typer.Typer(help="The measured datasets under data/.\n\n"
                       "Example: kerncast data summary data/h100")
app.add_typer(data_app, name="data")

JsonOpt = Annotated[bool, typer.Option("--json", help="Write JSON for scripts.")]


def _is_dataset(path: Path) -> bool:
    return path.is_dir() and (any(path.glob("*.parquet")) or (path / "parts").is_dir())


def default_paths() -> list[Path]:
    """Every dataset directory under ./data (or the checkout's data/)."""
    for root in (Path.cwd() / "data", Path(__file__).resolve().parents[3] / "data"):
        if root.is_dir():
            found = sorted(p for p in root.iterdir() if _is_dataset(p))
            if found:
                return found
    return []


def _print(summary: dict) -> None:
    table = Table(title=f"{summary['name']} ({summary['path']}; {len(summary['kernels'])} kernels, "
                        f"{summary['parts']} uncompacted parts)", title_justify="left")
    for col in ("table", "rows", "kernels", "sizes", "configs", "SM counts", "devices", "status"):
        table.add_column(col, justify="right" if col in ("rows", "kernels", "configs") else "left")
    for name, info in summary["tables"].items():
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(info.get("status", {}).items()))
        table.add_row(name, str(info["rows"]), str(len(info.get("kernels", []))),
                      ",".join(info.get("sizes", [])), str(info.get("configurations", 0)),
                      ",".join(map(str, info.get("sm_counts", []))),
                      ",".join(info.get("devices", [])), statuses)
    console.print(table)
    gaps = summary["empty_provenance"]
    if gaps:
        err_console.print("[bold red]empty provenance:[/] " +
                          ", ".join(f"{k} ({v} rows)" for k, v in gaps.items()))
    else:
        console.print("provenance: complete (no empty fields)")


@data_app.command("summary")
def summary_cmd(
    paths: Annotated[list[str] | None, typer.Argument(help="Dataset directories (default: "
                                                           "every one under data/).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """What each dataset holds: rows per table, kernels, sizes, configurations, SM counts,
    statuses, and provenance fields left empty (exit 1 if there are any).

    Example: kerncast data summary data/h100 --json
    """
    from kerncast.data import summarize  # noqa: PLC0415 (CLI start-up: data loads pandas)

    targets = [Path(p) for p in paths] if paths else default_paths()
    if not targets:
        raise InputError("no datasets found under data/; give a dataset directory")
    summaries = [summarize(p) for p in targets]
    if as_json:
        print_json(summaries)
    else:
        for summary in summaries:
            _print(summary)
    if any(s["empty_provenance"] for s in summaries):
        raise typer.Exit(1)


@data_app.command("compact")
def compact_cmd(
    path: Annotated[str, typer.Argument(help="A dataset directory.")],
    as_json: JsonOpt = False,
) -> None:
    """Merge a dataset's part files into one Parquet file per table.

    Example: kerncast data compact data/h100
    """
    from kerncast.data import compact  # noqa: PLC0415 (CLI start-up: data loads pandas)

    if not Path(path).is_dir():
        raise InputError(f"{path} is not a directory; give a dataset directory")
    counts = compact(path)
    if as_json:
        print_json(counts)
    else:
        console.print(f"{path}: " + ", ".join(f"{t} {n} rows" for t, n in counts.items()))

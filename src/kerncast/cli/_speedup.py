"""``kerncast speedup``: how much faster would this CPU region run as a GPU port (XAPP)?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kerncast._errors import InputError
from kerncast.cli._app import app
from kerncast.cli._output import console, print_json

_DEVICES = ("h100", "h200")


def _load(device: str) -> Any:
    from kerncast.models import trained_model  # noqa: PLC0415 (the models load scikit-learn)

    if device not in _DEVICES:
        raise InputError(f"no speedup model for device {device!r}: kerncast has them for "
                         f"{', '.join(_DEVICES)}")
    return trained_model("xapp", device)


def _show(profile: Any, answer: dict[str, Any], device: str, show_features: bool) -> None:
    verdict = "worth porting" if answer["port"] else "not worth porting"
    console.print(f"[bold]predicted speedup on {device.upper()}: {answer['speedup']:.1f}x[/bold] "
                  f"({answer['level']:.0%} interval {answer['low']:.1f}x - {answer['high']:.1f}x); "
                  f"{verdict} (threshold {answer['threshold']:g}x)")
    console.print(f"region {profile.region}: {profile.calls} call(s), {profile.ops:,} operations, "
                  f"{profile.refs:,} memory references; profiled in {profile.profiled_s:.2f} s, "
                  f"{profile.slowdown:.0f}x its native {profile.native_s * 1e3:.2f} ms"
                  + (" (a prefix: the operation limit was reached)" if profile.truncated else ""))
    explain = answer["explain"]
    table = Table(title="what drove the prediction (factor: how much each term multiplies the speedup)")
    for column in ("term", "value", "factor"):
        table.add_column(column, justify="left" if column == "term" else "right")
    for term in explain["terms"]:
        table.add_row(term["term"], f"{term['value']:.3g}", f"{term['factor']:.2f}x")
    console.print(table)
    if show_features:
        feats = Table(title="the region's features")
        feats.add_column("feature")
        feats.add_column("value", justify="right")
        for name, value in profile.features.items():
            feats.add_row(name, f"{value:.4g}")
        console.print(feats)
    console.print(f"model: {answer['candidate']}, trained on {answer['trained_on']} corpus kernels; "
                  "benchmarks/xapp_accuracy.py scores it on kernels it never saw")


GPU_SUFFIXES = (".cu", ".cuh", ".cl", ".ptx")


@app.command("speedup")
def speedup_cmd(
    program: Annotated[Path, typer.Argument(help="The C or C++ program (its main file).")],
    args: Annotated[list[str] | None, typer.Argument(help="The program's arguments, after --.")] = None,
    region: Annotated[str | None, typer.Option(
        "--region", "-r", help="The function whose calls are the region (keep it noinline); "
                               "default: the kerncast_region_begin()/end() markers.")] = None,
    device: Annotated[str, typer.Option("--device", "-d", help="GPU: h100 or h200.")] = "h100",
    source: Annotated[list[Path] | None, typer.Option("--source", help="More source files.")] = None,
    include: Annotated[list[str] | None, typer.Option("-I", help="Include directory.")] = None,
    define: Annotated[list[str] | None, typer.Option("-D", help="Macro, NAME or NAME=VALUE.")] = None,
    flag: Annotated[list[str] | None, typer.Option("-X", help="Extra compiler flag.")] = None,
    threshold: Annotated[float, typer.Option(help="Speedup worth porting for.")] = 1.0,
    timeout: Annotated[float, typer.Option(help="Seconds one run may take.")] = 3600.0,
    max_ops: Annotated[int, typer.Option(
        "--max-ops", help="Profile only the region's first N operations (0: all).")] = 0,
    features: Annotated[bool, typer.Option("--features", help="Show all 39 features.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Write JSON for scripts.")] = False,
) -> None:
    """Predict the GPU speedup of a CPU region before writing GPU code (XAPP).

    The program is compiled with clang-14, run natively and then under the profiler; the
    region's 39 features go through the model trained on kerncast's corpus for DEVICE.

    Example: kerncast speedup saxpy.c --region saxpy --device h100 -- 1000000
    """
    from kerncast.cpu import profile  # noqa: PLC0415 (CLI start-up: cpu loads on use)

    if not threshold > 0:
        raise InputError(f"--threshold must be a positive speedup, not {threshold:g}")
    for path in (program, *(source or [])):
        if path.suffix.lower() in GPU_SUFFIXES:
            raise InputError(f"{path} is GPU code; kerncast speedup takes the C or C++ program "
                             "that runs on the CPU (kerncast predict takes a kernel)")
    model = _load(device)
    prof = profile([program, *(source or [])], region, args or [], flags=flag or [],
                   include_dirs=include or [], defines=define or [], timeout=timeout,
                   max_ops=max_ops)
    answer = model.speedup(prof.features, prof.native_s, threshold=threshold)
    if as_json:
        print_json({"device": device, **answer, "profile": prof.row()})
        return
    _show(prof, answer, device, features)

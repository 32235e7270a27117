"""``kerncast explain``: a launch's bottleneck, the gain of each fix, its roofline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from kerncast._errors import InputError
from kerncast.cli._app import app
from kerncast.cli._output import console, print_json, status, writable_parent
from kerncast.cli._predict import (DeviceOpt, JsonOpt, KernelArg, LangOpt, SizeOpt, _fmt,
                                   _tunables, show_breakdown)
from kerncast.cli._target import (ArgOpt, BlockOpt, CompilerOpt, DefineOpt, GridOpt, KernelOpt,
                                  OptionOpt, SmemOpt, parse_config, target_of)

FixOpt = Annotated[list[str] | None, typer.Option(
    "--fix", help="A limiter to remove (repeatable): bank-conflicts, uncoalesced, occupancy, "
                  "divergence. Default: each of them in turn.")]


@app.command("explain")
def explain_cmd(
    kernel: KernelArg,
    device: DeviceOpt = "h100",
    size: SizeOpt = "large",
    config: Annotated[list[str] | None, typer.Option(
        "--config", "-c", help="A tunable parameter NAME=VALUE (repeatable).")] = None,
    lang: LangOpt = None,
    sm_count: Annotated[int | None, typer.Option(help="Predict for this many SMs.")] = None,
    fix: FixOpt = None,
    plot: Annotated[Path | None, typer.Option(
        help="Write the roofline and what-if chart of the launch (PNG).")] = None,
    importance: Annotated[Path | None, typer.Option(
        help="A dataset directory (e.g. data/h100): also fit the learned models that report "
             "variable importance on it and show what drives their predictions.")] = None,
    entry: KernelOpt = None, grid: GridOpt = None, block: BlockOpt = None, smem: SmemOpt = 0,
    arg: ArgOpt = None, compiler: CompilerOpt = "auto", option: OptionOpt = None,
    define: DefineOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Why a launch takes its time: its bottleneck, and what removing each limiter (bank
    conflicts, uncoalesced accesses, low occupancy, divergence) would gain, from the
    static simulator re-run without it. No GPU needed.

    Examples:
      kerncast explain corpus:transpose_naive --device h100 --plot transpose.png
      kerncast explain corpus:smem_bank_stride -c stride=32 --fix bank-conflicts
      kerncast explain saxpy.toml --importance data/h100
    """
    from kerncast.models import what_if  # noqa: PLC0415 (the models load on use)

    if plot is not None:
        if plot.suffix.lower() != ".png":
            raise InputError(f"--plot {plot}: the chart is written as PNG; name a .png file")
        writable_parent(plot)
    dataset = _dataset(importance)
    target = target_of(kernel, entry=entry, grid=grid, block=block, smem=smem, args=arg,
                       compiler=compiler, options=option, defines=define, lang=lang)
    with status("predicting", as_json) as spinner:
        report = getattr(spinner, "update", None)
        if target.own:
            result = what_if(*target.instance(parse_config(config)), device=device, only=fix,
                             sm_count=sm_count, progress=report)
        else:
            result = what_if(kernel, device=device, only=fix, sm_count=sm_count, size=size,
                             tunables=_tunables(config), language=lang or "cuda",
                             progress=report)
        drivers = _drivers(dataset, report)
    if plot is not None:
        from kerncast.evaluate import roofline_figure  # noqa: PLC0415 (matplotlib on use)

        roofline_figure(result.roofline, result.seconds, result.fixed,
                        f"{result.kernel} on {result.device}", plot)
    if as_json:
        print_json({**result.to_dict(), "importance": drivers,
                    "plot": None if plot is None else str(plot)})
        return
    _show(kernel, result, drivers, plot)


def _dataset(path: Path | None):
    if path is None:
        return None
    from kerncast.data import Dataset  # noqa: PLC0415 (pandas: not on every command)

    return Dataset.read(path)


def _drivers(dataset, report) -> dict[str, list[tuple[str, float]]]:
    if dataset is None:
        return {}
    from kerncast.models import importance  # noqa: PLC0415 (CLI start-up: models is heavy)

    if report:
        report("fitting the learned models for their variable importance")
    found = importance(dataset)
    if not found:
        raise InputError("no learned model that reports variable importance can train on "
                         "this dataset; gpu-random-forest needs Nsight Compute counters "
                         "(kerncast measure corpus --experiments counters)")
    return found


def _show(kernel: str, result, drivers: dict, plot: Path | None) -> None:
    console.print(f"[bold]{kernel}[/] on {result.device} (static): "
                  f"[bold]{_fmt(result.seconds)}[/], bottleneck: {result.bottleneck}")
    show_breakdown(result.breakdown, result.seconds)
    roof = result.roofline
    console.print(f"roofline: {roof['flops'] / 1e9:,.3g} GFLOP, {roof['dram_bytes'] / 1e9:,.3g} "
                  f"GB of DRAM traffic, {roof['intensity']:.3g} FLOP/byte; "
                  f"{roof['flops_per_s'] / roof['peak_fp32']:.0%} of the fp32 peak and "
                  f"{roof['bytes_per_s'] / roof['peak_bandwidth']:.0%} of the DRAM bandwidth")
    fixes = Table(title="what if (the same launch, one limiter removed)", title_justify="left")
    for col in ("fix", "predicted", "gain"):
        fixes.add_column(col, justify="left" if col == "fix" else "right")
    for name, gain in result.gains().items():
        fixes.add_row(name, _fmt(result.fixed[name]), f"{gain:.2f}x")
    console.print(fixes)
    for model, ranked in drivers.items():
        table = Table(title=f"variable importance of {model}", title_justify="left")
        table.add_column("feature")
        table.add_column("importance", justify="right")
        for feature, value in ranked:
            table.add_row(feature, f"{value:.3f}")
        console.print(table)
    if plot is not None:
        console.print(f"chart: {plot}")

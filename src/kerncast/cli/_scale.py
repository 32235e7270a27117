"""``kerncast scale``: time and power at other SM counts and devices, from one base run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from kerncast._errors import InputError, ToolchainError
from kerncast.cli._app import app
from kerncast.cli._output import console, err_console, print_json, writable_parent
from kerncast.cli._target import (
    ArgOpt, BlockOpt, CompilerOpt, DefineOpt, GridOpt, KernelOpt, OptionOpt, SmemOpt, target_of,
)


def _show(table: Any, info: dict[str, Any]) -> None:
    power = "power not measured" if info["base_power_w"] != info["base_power_w"] \
        else f"{info['base_power_w']:.0f} W"
    console.print(f"[bold]{info['kernel']}[/bold] (size {info['size']}, launch {info['config']}) from "
                  f"its base run at {info['base']}: {info['base_time_s'] * 1e3:.4g} ms, {power}")
    measured = bool(table["measured_time_s"].notna().any())
    out = Table(title="predicted (measured, error) at each configuration" if measured
                else "predicted at each configuration (none of it measured)")
    columns = ("configuration", "time ms", "measured", "error", "power W", "measured ", "error ")
    for col in columns if measured else columns[:2] + columns[4:5]:
        out.add_column(col, justify="left" if col == "configuration" else "right")
    for r in table.itertuples(index=False):
        cells = [f"{r.device}:{r.sm_count}", f"{r.time_s * 1e3:.4g}", _fmt(r.measured_time_s * 1e3),
                 _pct(r.error_time_s_pct), _fmt(r.power_w), _fmt(r.measured_power_w),
                 _pct(r.error_power_w_pct)]
        out.add_row(*(cells if measured else cells[:2] + cells[4:5]))
    console.print(out)
    how = ("regression on how the base run is bound" if info["method"] == "regression"
           else f"published, {info['clusters']} clusters per set")
    others = "corpus" if "base_run" in info else "other"
    console.print(f"scaling-surfaces model ({how}) fitted on the {info['trained_on']} {others} "
                  "kernels; benchmarks/scaling_accuracy.py scores it held out by kernel")


def _fmt(value: float) -> str:
    return "-" if value != value else f"{value:.4g}"


def _pct(value: float) -> str:
    return "-" if value != value else f"{value:+.1f}%"


def plot_surface(table: Any, info: dict[str, Any], path: Path) -> None:
    """Heat maps of the predicted time surface and, where measured, of its error."""
    import matplotlib  # noqa: PLC0415 (on use: matplotlib)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415 (on use: matplotlib)
    import numpy as np  # noqa: PLC0415 (CLI start-up: numpy on use)

    devices = list(dict.fromkeys(table["device"]))
    sms = sorted(set(table["sm_count"]))
    grids = [np.full((len(devices), len(sms)), np.nan) for _ in range(2)]
    for r in table.itertuples(index=False):
        at = (devices.index(r.device), sms.index(r.sm_count))
        grids[0][at], grids[1][at] = r.time_s * 1e3, r.error_time_s_pct
    panels = 2 if np.isfinite(grids[1]).any() else 1  # the error only where measured
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 1.2 + 0.8 * len(devices)),
                             squeeze=False)
    for ax, grid, title, cmap in zip(axes[0], grids, ("predicted time, ms", "error vs measured, %"),
                                     ("viridis", "coolwarm")):
        lim = np.nanmax(np.abs(grid)) if np.isfinite(grid).any() else 1.0
        im = ax.imshow(grid, cmap=cmap, aspect="auto",
                       **({"vmin": -lim, "vmax": lim} if cmap == "coolwarm" else {}))
        ax.set_xticks(range(len(sms)), [str(s) for s in sms])
        ax.set_yticks(range(len(devices)), devices)
        ax.set_xlabel("SMs")
        ax.set_title(title)
        for (i, j), v in np.ndenumerate(grid):
            ax.text(j, i, "" if v != v else f"{v:.3g}", ha="center", va="center", fontsize=7)
        fig.colorbar(im, ax=ax)
    fig.suptitle(f"{info['kernel']} from {info['base']}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


@app.command("scale")
def scale_cmd(
    kernel: Annotated[str | None, typer.Argument(
        help="corpus:NAME (its base run is read from data/), or one's own kernel: a launch "
             "file (.toml) or a source file with --kernel, --grid, --block and --arg, whose "
             "base run is measured on this machine's GPU (or read with --base-run).")] = None,
    size: Annotated[str, typer.Option("--size", "-s", help="Problem size (corpus).")] = "large",
    base: Annotated[str | None, typer.Option(
        "--base", help="Base configuration DEVICE:SMS (corpus default h100:132; one's own "
                       "kernel: this GPU, all its SMs).")] = None,
    to: Annotated[str | None, typer.Option(
        "--to", help="Targets DEVICE:SMS,... (default: every measured configuration).")] = None,
    method: Annotated[str, typer.Option(
        "--method", help="regression (kerncast's, the default) or clusters (as published).")] = "regression",
    base_run: Annotated[Path | None, typer.Option(
        "--base-run", help="One's own kernel's base run, as --save-base wrote it (no GPU "
                           "needed).")] = None,
    save_base: Annotated[Path | None, typer.Option(
        "--save-base", help="Write the base run measured here to this JSON file.")] = None,
    backend: Annotated[str, typer.Option(help="Backend that measures one's own kernel's base "
                                              "run: cupy or driver.")] = "cupy",
    plot: Annotated[Path | None, typer.Option("--plot", help="Write heat maps to this PNG.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Write JSON for scripts.")] = False,
    entry: KernelOpt = None, grid: GridOpt = None, block: BlockOpt = None, smem: SmemOpt = 0,
    arg: ArgOpt = None, compiler: CompilerOpt = "auto", option: OptionOpt = None,
    define: DefineOpt = None,
) -> None:
    """Predict a kernel's time and power at other SM counts and devices from one base run
    with counters (the scaling-surfaces model: by default trees on how the base run is bound;
    --method clusters: the published clusters of scaling values chosen by a network).

    Example: kerncast scale corpus:matmul_tiled --base h100:132 --to h200:64,h100:32

    Example: kerncast scale saxpy.toml --to h100:32,h200 --save-base saxpy-base.json

    Example: kerncast scale --base-run saxpy-base.json --to h200:64
    """
    for path in (plot, save_base):
        if path is not None:
            writable_parent(path)
    own = {"entry": entry, "grid": grid, "block": block, "smem": smem, "args": arg,
           "compiler": compiler, "options": option, "defines": define}
    from kerncast.models import corpus_surface, own_surface  # noqa: PLC0415 (on use: scikit-learn)

    run = _own_base_run(kernel, base, base_run, backend, own, quiet=as_json)
    if run is None:
        if save_base is not None:
            raise InputError(f"--save-base writes the base run measured for one's own kernel; "
                             f"{kernel}'s base run is the shipped data's")
        table, info = corpus_surface(str(kernel), size, base or "h100:132", to, method)
    else:
        if save_base is not None:
            run.save(save_base)
        table, info = own_surface(run, to, method)
    if plot is not None:
        plot_surface(table, info, plot)
    if as_json:
        print_json({**info, "targets": table.drop(columns=[c for c in table if c.endswith("_clusters")])
                    .to_dict(orient="records"), "plot": str(plot) if plot else None})
        return
    _show(table, info)
    if save_base is not None and run is not None:
        console.print(f"base run written to {save_base}")
    if plot is not None:
        console.print(f"heat maps written to {plot}")


def _own_base_run(kernel: str | None, base: str | None, path: Path | None, backend: str,
                  own: dict[str, Any], quiet: bool) -> Any:
    """One's own kernel's base run: read from ``path``, or measured here at ``base``; None
    for a corpus kernel."""
    from kerncast.measure import measure_base_run  # noqa: PLC0415 (on use: GPU)
    from kerncast.models import own_base, saved_run  # noqa: PLC0415 (on use: scikit-learn)

    if path is not None:
        if kernel is not None:
            raise InputError(f"give either a kernel ({kernel}) or --base-run {path}: the base "
                             "run names its kernel")
        return saved_run(path, base)
    if kernel is None:
        raise InputError("give a kernel: corpus:NAME, a launch file (.toml) or a source file "
                         "with --kernel, --grid, --block and --arg; or --base-run PATH")
    found = target_of(kernel, **own)
    if not found.own:
        return None
    where = own_base(base)
    instance, launch = found.instance({})
    say = (lambda text: None) if quiet else (lambda text: err_console.print(f"[dim]{text}[/dim]"))
    try:
        return measure_base_run(instance, launch, **where, backend=backend, progress=say)
    except ToolchainError as exc:
        why = str(exc).split(";")[0]
        raise ToolchainError(f"the base run of one's own kernel is measured on an NVIDIA GPU "
                             f"here ({why}); on a machine without one, "
                             "predict from a base run measured on a GPU: kerncast scale "
                             "--base-run PATH (written there with --save-base PATH)") from None

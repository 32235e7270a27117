"""``kerncast measure KERNEL`` (one kernel) and ``kerncast measure corpus`` (a campaign)."""

from __future__ import annotations

import math
from typing import Annotated

import typer
from rich.table import Table
from rich.markup import escape

from kerncast._errors import InputError
from kerncast.cli._app import app
from kerncast.cli._output import console, err_console, print_json, progress
from kerncast.cli._target import (ArgOpt, BlockOpt, CompilerOpt, DefineOpt, GridOpt, KernelOpt,
                                  OptionOpt, SmemOpt, parse_config, target_of)

JsonOpt = Annotated[bool, typer.Option("--json", help="Write JSON for scripts.")]


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _tunables(pairs: list[str] | None) -> dict[str, int]:
    out = {}
    for pair in _split(pairs) or []:
        name, sep, value = pair.partition("=")
        if not sep:
            raise InputError(f"--config {pair!r} is not NAME=VALUE; write e.g. --config bx=32")
        try:
            out[name.strip()] = int(value)
        except ValueError:
            raise InputError(f"--config {pair!r}: the value must be an integer") from None
    return out


def _us(value) -> str:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return "-"
    return "-" if math.isnan(value) else f"{value * 1e6:.2f}"


def _show_row(row: dict) -> None:
    size = f" size {row['size']}" if row.get("size") else ""
    table = Table(title=f"{row['kernel']} ({row['language']}){size} {row['config']} "
                        f"on {row['device']} ({row['sm_count']} SMs, {row.get('backend', '')})",
                  title_justify="left")
    for col in ("status", "median µs", "min µs", "mean µs", "IQR µs", "reps", "converged",
                "regs", "smem", "grid", "block"):
        table.add_column(col, justify="left" if col == "status" else "right")
    table.add_row(str(row["status"]), _us(row.get("time_median_s")), _us(row.get("time_min_s")),
                  _us(row.get("time_mean_s")), _us(row.get("time_iqr_s")),
                  str(row.get("repetitions", "")), str(row.get("converged", "")),
                  str(row.get("registers", "")), str(row.get("static_shared", "")),
                  f"{row['grid_x']}x{row['grid_y']}x{row['grid_z']}",
                  f"{row['block_x']}x{row['block_y']}x{row['block_z']}")
    console.print(table)
    clocks = (row.get("sm_clock_mhz_before"), row.get("sm_clock_mhz_after"))
    console.print(f"clocks: SM {clocks[0]} -> {clocks[1]} MHz; measured {row.get('measured_at', '')}")
    if row.get("error"):
        err_console.print(f"[bold red]{row['status']}:[/] {escape(str(row['error']))}")


def _single(target: str, device, size, config, backend, dataset, sm_count, as_json,
            own: dict) -> None:
    from kerncast.measure import measure  # noqa: PLC0415 (CLI start-up: measure is heavy)

    found = target_of(target, **own)
    if found.own:
        kernel, launch = found.instance(parse_config(config))
        result = measure(kernel, launch, device=device, backend=backend, sm_count=sm_count,
                         dataset=dataset)
    else:
        result = measure(target, size=size, tunables=_tunables(config), device=device,
                         backend=backend, sm_count=sm_count, dataset=dataset)
    if as_json:
        print_json(result.to_dict())
    else:
        _show_row(result.row)
    if not result.ok:
        raise typer.Exit(1)


def _campaign(device, backend, out, experiments, kernels, sizes, sm_counts, configs, deadline,
              workers, seed, item_timeout, retry_failed, corpus_root, flush_rows, budget,
              as_json, gpus=None, executor="pool", address=None, slices=0) -> None:
    from kerncast.measure import (  # noqa: PLC0415 (CLI start-up: measure is heavy)
        DEFAULT_SM_COUNTS, Campaign, TimingPolicy, parse_gpus,
    )

    if out is None:
        raise InputError("kerncast measure corpus needs --out DIR (the dataset directory)")
    try:
        counts = tuple(int(n) for n in (_split(sm_counts) or DEFAULT_SM_COUNTS))
    except ValueError:
        raise InputError("--sm-counts takes integers, e.g. --sm-counts 8,16,32") from None
    if address is not None and executor != "ray":
        raise InputError("--address names a Ray cluster; use it with --executor ray")
    if executor not in ("pool", "ray"):
        raise InputError(f"--executor {executor}: a campaign over GPUs or slices runs on "
                         "pool (a process per GPU or slice) or ray")
    if gpus and slices:
        raise InputError("--gpus and --slices exclude each other: --slices divides a CPU's "
                         "cores (PoCL), --gpus picks GPUs")
    campaign = Campaign(out, device=device, backend=backend,
                        experiments=_split(experiments) or ["times"], kernels=_split(kernels),
                        sizes=_split(sizes), sm_counts=counts, configs=configs,
                        deadline_s=deadline, workers=workers, seed=seed,
                        item_timeout_s=item_timeout, retry_failed=retry_failed,
                        corpus_root=corpus_root, flush_rows=flush_rows,
                        policy=TimingPolicy(budget_s=budget), gpus=parse_gpus(gpus),
                        executor=executor, address=address, slices=slices or 0)
    if as_json:
        result = campaign.run()
    else:
        with progress("measuring") as report:
            result = campaign.run(report)
    if as_json:
        print_json(result.to_dict())
        if result.interrupted:
            raise typer.Exit(130)
        return
    for note in result.notes:
        console.print(f"note: {escape(str(note))}")
    console.print(f"{result.measured} of {result.measured + result.remaining} items measured in "
                  f"{result.elapsed_s:.0f} s; rows {result.rows}; statuses {result.statuses}")
    if result.remaining:
        why = "the deadline came" if result.stopped_by_deadline else "it was interrupted"
        console.print(f"{result.remaining} items remain ({why}); run the same command again to "
                      "resume")
        if result.interrupted:
            raise typer.Exit(130)  # a campaign cut short by the user is not a success
    elif result.compacted:
        console.print(f"complete; parts compacted into {out}/<table>.parquet")


@app.command("measure")
def measure_cmd(
    target: Annotated[str, typer.Argument(
        help="A source file (.cu, .cl, .ptx) with --kernel, --grid, --block and --arg; a launch "
             "file (.toml); a corpus kernel (corpus:NAME); or 'corpus' for a campaign.")],
    device: Annotated[str | None, typer.Option("--device", "-d", help="Device: h100, h200; cpu "
                                                                       "for pocl.")] = None,
    size: Annotated[str, typer.Option("--size", "-s", help="Problem size (one kernel).")] = "small",
    config: Annotated[list[str] | None, typer.Option("--config", "-c", help="Tunable NAME=VALUE "
                                                     "(repeatable; one kernel).")] = None,
    backend: Annotated[str, typer.Option(help="cupy, opencl (NVIDIA), pocl (CPU), replay.")] = "cupy",
    dataset: Annotated[str | None, typer.Option(help="Dataset for --backend replay.")] = None,
    sm_count: Annotated[int | None, typer.Option(help="Limit to N SMs (green context).")] = None,
    out: Annotated[str | None, typer.Option(help="Campaign: dataset directory.")] = None,
    experiments: Annotated[list[str] | None, typer.Option(
        help="Campaign: times,samples,samples-full,samples-paid,energy,sm-sweep,energy-sweep,"
             "counters,counters-sweep,sample-counters,cpu.")] = None,
    kernels: Annotated[list[str] | None, typer.Option(help="Campaign: kernels (default all).")] = None,
    sizes: Annotated[list[str] | None, typer.Option(help="Campaign: sizes (default all).")] = None,
    sm_counts: Annotated[list[str] | None, typer.Option(
        help="Campaign: SM counts of sm-sweep, energy-sweep and counters-sweep.")] = None,
    configs: Annotated[str, typer.Option(
        help="Campaign: auto, all, default, or spread (the default and the two configurations "
             "farthest apart in threads per block).")] = "auto",
    deadline: Annotated[float | None, typer.Option(help="Campaign: stop starting work so that "
                                                        "all is written within S seconds.")] = None,
    workers: Annotated[int | None, typer.Option(help="Campaign: input-preparing processes.")] = None,
    seed: Annotated[int, typer.Option(help="Input generator seed.")] = 0,
    item_timeout: Annotated[float, typer.Option(help="Campaign: seconds before an item is "
                                                     "killed.")] = 120.0,
    retry_failed: Annotated[bool, typer.Option(help="Campaign: measure failed items again.")] = False,
    budget: Annotated[float, typer.Option(help="Campaign: timing budget per config, s.")] = 1.0,
    gpus: Annotated[str | None, typer.Option(
        help="Campaign: measure on these GPUs at once (all, or indices/UUIDs: 0,1), one "
             "worker per GPU.")] = None,
    slices: Annotated[int | None, typer.Option(
        help="Campaign on a CPU (--backend pocl): measure with N workers at once, each on "
             "its own 1/N of the cores; each slice is a device of its own, keyed "
             "cpu:<model>-<cores>-cores.")] = None,
    executor: Annotated[str, typer.Option(
        help="Campaign with --gpus or --slices: pool (a process per GPU or slice) or ray "
             "(each a Ray task).")] = "pool",
    address: Annotated[str | None, typer.Option(
        help="Campaign with --executor ray: the cluster's address (default a local one).")] = None,
    corpus_root: Annotated[str | None, typer.Option(hidden=True)] = None,
    flush_rows: Annotated[int, typer.Option(hidden=True)] = 50,
    entry: KernelOpt = None, grid: GridOpt = None, block: BlockOpt = None, smem: SmemOpt = 0,
    arg: ArgOpt = None, compiler: CompilerOpt = "auto", option: OptionOpt = None,
    define: DefineOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Measure one kernel launch, or the whole corpus into a dataset (a campaign).

    Example: kerncast measure saxpy.toml --device h100

    Example: kerncast measure corpus:matmul_tiled --device h100 --size large --config tile=32

    Example: kerncast measure corpus --device h100 --out data/h100 --experiments times,samples
    --deadline 540

    Example: kerncast measure corpus --device h100 --out data/h100 --experiments sm-sweep
    --gpus all

    Example: kerncast measure corpus --backend pocl --out data/pocl-halves --slices 2
    """
    if target == "corpus":
        _campaign(device, backend, out, experiments, kernels, sizes, sm_counts, configs,
                  deadline, workers, seed, item_timeout, retry_failed, corpus_root,
                  flush_rows, budget, as_json, gpus, executor, address, slices)
    else:
        own = {"entry": entry, "grid": grid, "block": block, "smem": smem, "args": arg,
               "compiler": compiler, "options": option, "defines": define}
        _single(target, device, size, config, backend, dataset, sm_count, as_json, own)

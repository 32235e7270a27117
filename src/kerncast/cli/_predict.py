"""``kerncast predict`` and ``kerncast sweep``."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Annotated

import typer

from kerncast._errors import InputError
from kerncast.cli._app import app
from kerncast.cli._fanout import AddressOpt, ExecutorOpt, WorkersOpt, executor_of
from kerncast.cli._output import (console, err_console, escape, new_table, print_json,
                                  progress, status, writable_parent)
from kerncast.cli._target import (ArgOpt, BlockOpt, CompilerOpt, DefineOpt, GridOpt, KernelOpt,
                                  OptionOpt, SmemOpt, parse_config, target_of)
from kerncast.devices import get_device

JsonOpt = Annotated[bool, typer.Option("--json", help="Write JSON for scripts.")]
DeviceOpt = Annotated[str, typer.Option("--device", "-d", help="Device name or alias.")]
SizeOpt = Annotated[str, typer.Option("--size", "-s", help="Problem size: small, medium, large.")]
LangOpt = Annotated[str | None, typer.Option(
    "--lang", help="cuda or opencl (corpus kernels: default cuda; files: from the suffix).")]
KernelArg = Annotated[str, typer.Argument(
    help="A source file (.cu, .cl, .ptx) with --kernel, --grid, --block and --arg; a launch "
         "file (.toml); corpus:NAME; or DIR:NAME (a directory with a corpus spec).")]


def _tunables(config: list[str] | None) -> dict[str, int]:
    out = {}
    for name, value in parse_config(config).items():
        if not isinstance(value, int) or isinstance(value, bool):
            raise InputError(f"--config {name}={value}: a corpus tunable takes an integer")
        out[name] = value
    return out


def _waits(based_on: dict) -> dict[str, str]:
    """The static model's calibrated waits, a line each: the block turnaround the rounds
    waited for, the most the DRAM's latency grew with its load and how far single reads'
    latencies spread (``--json`` has them whole)."""
    out = {}
    turnaround = based_on.get("block_turnaround")
    if isinstance(turnaround, dict):
        out["block_turnaround"] = f"{turnaround['cycles']:.0f} cycles ({turnaround['calibration']})"
    loaded = based_on.get("dram_load_latency")
    if isinstance(loaded, dict):
        out["dram_load_latency"] = (f"up to +{loaded['most_cycles']:.0f} cycles at "
                                    f"{loaded['at_share']:.0%} of peak ({loaded['calibration']})")
    spread = based_on.get("dram_spread")
    if isinstance(spread, dict):
        out["dram_spread"] = (f"standard deviation {spread['std_cycles']:.0f} cycles "
                              f"({spread['calibration']})")
    return out


def _pipe_note(based_on: dict) -> str | None:
    """Which pipe the static model's compute part is the time of, and how busy it is."""
    pipe = based_on.get("compute_pipe")
    if not isinstance(pipe, dict):
        return None
    return f"compute is the {pipe['label']}: busy {pipe['busy']:.0%} of the simulated round"


def _fmt(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "-"
    return f"{seconds * 1e6:.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.3f} ms"


@app.command("predict")
def predict_cmd(
    kernel: KernelArg,
    device: DeviceOpt = "h100",
    size: SizeOpt = "large",
    config: Annotated[list[str] | None, typer.Option(
        "--config", "-c", help="A tunable parameter NAME=VALUE (repeatable), e.g. --config "
        "tile=32; for a launch file it overrides \\[params].")] = None,
    model: Annotated[str, typer.Option(
        help="static (no GPU), or sampling / seed-linear / sampling-svr (runs sampled "
             "launches; sampling-svr also profiles one with Nsight Compute), or auto (the "
             "most accurate model these inputs allow, and why).")] = "static",
    backend: Annotated[str, typer.Option(
        help="For live sampling: cupy (NVIDIA GPU) or pocl (this CPU).")] = "cupy",
    lang: LangOpt = None,
    sm_count: Annotated[int | None, typer.Option(help="Predict for this many SMs.")] = None,
    budget: Annotated[float | None, typer.Option(
        help="For --model sampling: the share of the predicted launch the samples may take "
             "(default 0.1; larger is more accurate, smaller cheaper).")] = None,
    entry: KernelOpt = None, grid: GridOpt = None, block: BlockOpt = None, smem: SmemOpt = 0,
    arg: ArgOpt = None, compiler: CompilerOpt = "auto", option: OptionOpt = None,
    define: DefineOpt = None,
    registers: Annotated[int | None, typer.Option(
        help="The registers per thread of the binary you run; warns where kerncast's build "
             "differs.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Predict how long one kernel launch takes, with a breakdown and its bottleneck.

    Examples:
      kerncast predict saxpy.cu --kernel saxpy --grid 4096 --block 256 --arg n=int32:1048576
        --arg a=float32:2 --arg x=float32[1048576]:uniform(0,1) --arg y=float32[1048576]
      kerncast predict saxpy.toml --device h200
      kerncast predict corpus:matmul_tiled --device h100 --size large --config tile=32
    """
    from kerncast.models import predict  # noqa: PLC0415 (CLI start-up: models is heavy)

    target = target_of(kernel, entry=entry, grid=grid, block=block, smem=smem, args=arg,
                       compiler=compiler, options=option, defines=define, lang=lang)
    with status("predicting", as_json) as spinner:
        report = getattr(spinner, "update", None)
        if target.own:
            source, launch = target.instance(parse_config(config))
            p = predict(source, launch, device=device, model=model, sm_count=sm_count,
                        backend=backend, budget=budget, registers=registers, progress=report)
        else:
            p = predict(kernel, device=device, size=size, tunables=_tunables(config),
                        model=model, language=lang or "cuda", sm_count=sm_count,
                        backend=backend, budget=budget, registers=registers, progress=report)
    if as_json:
        print_json(p.to_dict())
        return
    console.print(f"[bold]{escape(str(kernel))}[/] on {p.based_on.get('device', device)} ({p.model}): "
                  f"[bold]{_fmt(p.seconds)}[/], bottleneck: {p.bottleneck}")
    if p.breakdown:
        show_breakdown(p.breakdown, p.seconds)
        if note := _pipe_note(p.based_on):
            console.print(note)
    if p.based_on.get("interval_80"):
        low, high = p.based_on["interval_80"]
        console.print(f"80% interval: {_fmt(low)} to {_fmt(high)} "
                      f"({escape(str(p.based_on['interval_from']))})")
    if p.based_on.get("chosen"):
        console.print(f"model chosen: {escape(str(p.based_on['chosen']))}")
        for line in p.based_on.get("passed_over", []):
            console.print(f"  passed over: {escape(str(line))}")
    basis = {k: v for k, v in p.based_on.items()
             if not isinstance(v, (dict, list)) and k not in ("warning", "chosen",
                                                               "interval_from")}
    basis.update(_waits(p.based_on))
    console.print("based on: " + escape(", ".join(f"{k}={v}" for k, v in basis.items())))
    if p.based_on.get("adapted_from"):
        console.print(f"note: {p.based_on['device']} has no calibration of its own; the "
                      f"calibration of {p.based_on['adapted_from']} was adapted to its spec, "
                      "assuming:")
        for line in p.based_on.get("adaptation", []):
            console.print(f"  - {escape(str(line))}")
    if note := _straggler_note(p.seconds, p.based_on.get("straggler")):
        console.print(note)
    if note := _segments_note(p.based_on.get("segments")):
        console.print(note)
    if p.based_on.get("warning"):
        err_console.print(f"warning: {escape(str(p.based_on['warning']))}")


def show_breakdown(breakdown: dict[str, float], seconds: float) -> None:
    """The parts of a predicted time as a table, and whether they overlap."""
    table = new_table(title="where the time goes", title_justify="left")
    table.add_column("part")
    table.add_column("time", justify="right")
    for part, value in breakdown.items():
        table.add_row(part, _fmt(value))
    console.print(table)
    if overlap := overlap_note(breakdown, seconds):
        console.print(overlap)


def overlap_note(breakdown: dict[str, float], seconds: float) -> str | None:
    """What the parts mean where they add up to more than the total: they overlap."""
    if sum(breakdown.values()) <= seconds * 1.001:
        return None
    return ("note: the parts overlap (they add up to more than the total): compute and "
            "memory are each the time that resource alone needs over the launch, and run "
            "at once; latency is the time neither explains, synchronisation the average "
            "wait at barriers")


def _straggler_note(seconds: float, straggler: dict | None) -> str | None:
    """A note where one thread's data-dependent loop sets most of the predicted time."""
    if not straggler or straggler["seconds"] < 0.5 * seconds:
        return None
    return (f"note: one thread's loop runs {straggler['trips']:,} iterations (the longest range "
            f"in {straggler['offsets']}; the emulated blocks ran at most "
            f"{straggler['traced_trips']:,}) and takes {_fmt(straggler['seconds'])} alone")


def _segments_note(segments: list | None) -> str | None:
    """A note where the grid's working blocks come first and its idle ones after them:
    each run's time, as the two were predicted apart."""
    if not segments:
        return None
    runs = "; ".join(f"blocks {s['first_block']:,} to {s['first_block'] + s['blocks'] - 1:,}: "
                     f"{_fmt(s['seconds'])} ({s['bottleneck']})" for s in segments)
    return (f"note: the blocks from {segments[1]['first_block']:,} on finish early and run "
            f"after the others, so the two runs were predicted apart and added: {runs}")


@app.command("sweep")
def sweep_cmd(
    kernel: KernelArg,
    device: DeviceOpt = "h100",
    size: SizeOpt = "large",
    lang: LangOpt = None,
    csv_out: Annotated[Path | None, typer.Option("--csv", help="Also write the ranking as CSV.")] = None,
    cache: Annotated[Path | None, typer.Option(
        help="For a launch file: also write Kernel Tuner's cache file of the predicted times "
             "(for its simulation mode).")] = None,
    compare: Annotated[Path | None, typer.Option(
        help="For a launch file: a Kernel Tuner cache of measured times to score the "
             "predictions against (MAPE, Spearman, top-1/5/10 regret).")] = None,
    top: Annotated[int, typer.Option(help="Rows to show (all go to --csv/--json).")] = 20,
    executor: ExecutorOpt = "serial",
    workers: WorkersOpt = None,
    address: AddressOpt = None,
    journal: Annotated[Path | None, typer.Option(
        help="Keep each finished configuration in this file as it comes; the same sweep run "
             "again with it predicts only what is missing (an interrupted sweep resumes).")
    ] = None,
    strategy: Annotated[str, typer.Option(
        help="For a launch file: which configurations to predict, as Kernel Tuner's "
             "strategies: brute_force (all), random_sample, greedy_ils (local search).")
    ] = "brute_force",
    max_configs: Annotated[int | None, typer.Option(
        "--max-configs", help="random_sample, greedy_ils: configurations to predict "
                              "(greedy_ils: default 100).")] = None,
    seed: Annotated[int, typer.Option(help="random_sample, greedy_ils: the random seed.")] = 0,
    configs: Annotated[Path | None, typer.Option(
        "--configs", help="For a launch file: predict only these configurations: a JSON list "
                          "of objects, or a CSV whose columns are the tunable parameters.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Predict the launch configurations of a kernel statically and rank them.

    A launch file's configurations are its \\[tune_params] (with its restrictions): all of
    them, a sample, a local search (--strategy) or a list (--configs).

    Examples:
      kerncast sweep corpus:matmul_regblock --device h100 --csv ranking.csv
      kerncast sweep vector_add.toml --cache vector_add_predicted.json
      kerncast sweep conv.toml --strategy greedy_ils --max-configs 200
    """
    from kerncast.models import Search, sweep, sweep_space  # noqa: PLC0415 (CLI start-up: models is heavy)

    target = target_of(kernel, lang=lang)
    if (cache is not None or compare is not None) and not target.own:
        raise InputError("--cache and --compare work with a launch file's [tune_params] in "
                         "Kernel Tuner's format; for a corpus kernel use --csv")
    options = {"seed": seed, **({} if max_configs is None else {"max_fevals": max_configs})}
    plan = Search.of(strategy, options)
    if (plan.strategy != "brute_force" or configs is not None) and not target.own:
        raise InputError("--strategy and --configs choose among a launch file's "
                         "[tune_params]; a corpus kernel's launch space is swept whole")
    only = _config_list(configs, target.space.tuning.tune_params) if configs else None
    get_device(device)  # an unknown device fails here, before the progress bar
    runner = executor_of(executor, workers, address)
    measured = _measured_cache(compare)
    for out in (csv_out, cache):
        if out is not None:
            writable_parent(out)
    with progress("sweeping", as_json) as report:
        tick = lambda done, total: report(done, total, "")  # noqa: E731
        if target.own:
            results, _ = sweep_space(target.space, device=device,
                                     cache=None if cache is None else str(cache),
                                     progress=tick, executor=runner,
                                     journal=None if journal is None else str(journal),
                                     plan=plan, only=only)
            rows = _ranked(results, list(target.space.tuning.tune_params))
            scored = _scored(results, measured) if measured is not None else None
        else:
            rows = sweep(kernel, device=device, size=size, language=lang or "cuda",
                         progress=tick, executor=executor, workers=workers, address=address,
                         journal=None if journal is None else str(journal))
    if csv_out is not None:
        _write_csv(csv_out, rows)
    if as_json:
        print_json({"rows": rows, "compare": scored} if measured is not None else rows)
        return
    title = f"{kernel} on {device}" + ("" if target.own else f", size {size}")
    table = new_table(title=f"{title}: {len(rows)} configurations", title_justify="left")
    for col in ("rank", "configuration", "predicted", "vs best", "bottleneck"):
        table.add_column(col, justify="right" if col in ("rank", "predicted", "vs best") else "left")
    best = rows[0]["seconds"] if rows else 0
    for i, r in enumerate(rows[:top], 1):
        ratio = f"{r['seconds'] / best:.2f}x" if best and r["seconds"] != float("inf") else "-"
        table.add_row(str(i), r["config"], _fmt(r["seconds"]), ratio, r["bottleneck"] or r["error"][:40])
    console.print(table)
    if measured is not None:
        console.print(f"against {compare} ({measured.device_name}): {scored['matched']} "
                      f"configurations, MAPE {scored['mape_pct']:.1f}%, Spearman "
                      f"{scored['spearman']:.2f}, regret top-1 {scored['regret_top1_pct']:.1f}%, "
                      f"top-5 {scored['regret_top5_pct']:.1f}%")


def _config_list(path: Path, tune_params: dict) -> list[dict]:
    """The configurations of ``--configs``: a JSON list of objects, or a CSV whose header
    names the tunable parameters (a cell is matched to the parameter's value it prints
    as)."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError(f"--configs {path}: cannot read it ({exc.strerror})") from None
    if path.suffix.lower() == ".json":
        try:
            listed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"--configs {path} is not valid JSON ({exc})") from None
        if not isinstance(listed, list) or not all(isinstance(c, dict) for c in listed):
            raise InputError(f"--configs {path}: give a JSON list of objects, e.g. "
                             '[{"block_size_x": 128}]')
        return listed
    rows = list(csv.DictReader(text.splitlines()))
    if not rows:
        raise InputError(f"--configs {path}: no configurations; give a CSV with a header of "
                         f"the tunable parameters ({', '.join(tune_params)}) and a row each")
    known = {name: {str(v): v for v in values} for name, values in tune_params.items()}
    return [{k: known.get(k, {}).get(str(v).strip(), str(v).strip()) for k, v in row.items()}
            for row in rows]


def _measured_cache(path: Path | None):
    """The Kernel Tuner cache ``--compare`` names, read before the sweep runs."""
    if path is None:
        return None
    from kerncast.tuner import read_cache  # noqa: PLC0415 (pandas loads on use)

    return read_cache(path)


def _scored(results: list[dict], measured) -> dict:
    """The predictions scored against a measured Kernel Tuner cache."""
    import pandas as pd  # noqa: PLC0415 (loads on use)

    from kerncast.tuner import compare  # noqa: PLC0415 (CLI start-up: tuner loads scipy)

    names = list(measured.tune_params)
    missing = [n for n in names if any(n not in r for r in results)]
    if missing:
        raise InputError(f"the measured cache tunes {', '.join(missing)}, which the launch "
                         "file's [tune_params] do not; tune the same parameters")
    frame = pd.DataFrame([{**{n: r[n] for n in names}, "time_ms": r["time"]} for r in results])
    return compare(frame, measured)


def _ranked(results: list[dict], names: list[str]) -> list[dict]:
    """Kernel Tuner style results as ranking rows, fastest first."""
    rows = [{"config": ",".join(f"{n}={r[n]}" for n in names) or "default",
             "seconds": r["time"] / 1e3, "bottleneck": r["bottleneck"], "grid": r["grid"],
             "block": r["block"], "error": r["error"], **{n: r[n] for n in names}}
            for r in results]
    return sorted(rows, key=lambda r: r["seconds"])


def _write_csv(path: Path, rows: list[dict]) -> None:
    """The ranking as CSV, written whole or not at all."""
    fields = ["rank", "config", "seconds", "bottleneck", "grid", "block", "error"]
    tmp = path.with_name(f".{path.name}.part")
    try:
        with open(tmp, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=fields)
            writer.writeheader()
            for i, r in enumerate(rows, 1):
                writer.writerow({"rank": i, **{k: r[k] for k in fields if k != "rank"}})
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise InputError(f"cannot write {path} ({exc.strerror})") from None

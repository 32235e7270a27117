"""``kerncast split``: one launch's grid run across several devices."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.markup import escape

from kerncast._errors import InputError
from kerncast.cli._app import app
from kerncast.cli._output import console, print_json, status
from kerncast.cli._predict import JsonOpt, KernelArg, LangOpt, SizeOpt, _fmt, _tunables
from kerncast.cli._target import (ArgOpt, BlockOpt, CompilerOpt, DefineOpt, GridOpt, KernelOpt,
                                  OptionOpt, SmemOpt, parse_config, target_of)

DevicesOpt = Annotated[str, typer.Option(
    "--devices", help="Comma-separated devices: cupy (the CUDA GPU), cupy:N (GPU N of "
                      "several), opencl (NVIDIA's OpenCL GPU), pocl (this CPU through PoCL).")]


@app.command("split")
def split_cmd(
    kernel: KernelArg,
    devices: DevicesOpt = "cupy,pocl",
    size: SizeOpt = "large",
    config: Annotated[list[str] | None, typer.Option(
        "--config", "-c", help="A tunable parameter NAME=VALUE (repeatable).")] = None,
    lang: LangOpt = None,
    baselines: Annotated[bool, typer.Option(
        help="Also measure the equal split, the split by peak rate, each device alone and "
             "(two devices) the best split found by measuring.")] = False,
    entry: KernelOpt = None, grid: GridOpt = None, block: BlockOpt = None, smem: SmemOpt = 0,
    arg: ArgOpt = None, compiler: CompilerOpt = "auto", option: OptionOpt = None,
    define: DefineOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run one launch's grid across several devices, divided by sampled throughput.

    Each device runs samples of the grid first; a line through them predicts its time,
    and the rest of the grid is divided so that the devices finish together. The outputs
    are gathered and checked against the first device running the whole grid alone.
    CUDA devices run any kernel (its PTX with a block offset); OpenCL devices (pocl,
    opencl) need an OpenCL C kernel.

    Examples:
      kerncast split corpus:black_scholes --lang opencl --devices cupy,pocl
      kerncast split corpus:matmul_tiled --devices cupy:0,cupy:1 --baselines
    """
    from kerncast.split import split  # noqa: PLC0415 (the measurement layer loads on use)

    names = [d.strip() for d in devices.split(",") if d.strip()]
    target = target_of(kernel, entry=entry, grid=grid, block=block, smem=smem, args=arg,
                       compiler=compiler, options=option, defines=define, lang=lang)
    if target.own:
        source, launch = target.instance(parse_config(config))
    else:
        from kerncast.models import resolve_kernel  # noqa: PLC0415 (CLI start-up: models is heavy)

        corpus = resolve_kernel(kernel)
        source, launch = corpus.instance(corpus.launch(size, _tunables(config)),
                                         lang or "cuda")
    if len(names) < 2:
        raise InputError(f"--devices {devices!r}: give at least two, e.g. cupy,pocl")
    with status("splitting", as_json) as spinner:
        result = split(source, launch, names, baselines=baselines,
                       progress=getattr(spinner, "update", None))
    if as_json:
        print_json(result.to_dict())
        return
    _show(kernel, result)


def _samples_note(result) -> str:
    """What became of the samples: none taken, kept as done work, or run again."""
    if not result.sampled:
        return "no samples taken"
    if result.samples_reused:
        return "samples kept as done work"
    return "samples run again (the kernel has inout buffers)"


def _show(kernel: str, result) -> None:
    console.print(f"[bold]{kernel}[/]: {result.slices} slices of {result.blocks_per_slice} "
                  f"block(s) along {result.axis}; makespan [bold]{_fmt(result.makespan_s)}[/] "
                  f"(predicted {_fmt(result.predicted_makespan_s)}); sampling took "
                  f"{_fmt(result.sampling_s)} of wall time")
    table = Table(title="each device's part", title_justify="left")
    for col in ("device", "name", "sampled", "slices", "first", "predicted", "measured"):
        table.add_column(col, justify="right" if col not in ("device", "name") else "left")
    for p in result.parts:
        table.add_row(p.device, p.name, str(p.sampled), str(p.slices), str(p.first),
                      _fmt(p.predicted_s), _fmt(p.measured_s))
    console.print(table)
    console.print(escape(f"divided {result.divided}; {_samples_note(result)}; "
                         f"{result.checked}"))
    if result.baselines:
        base = Table(title="against", title_justify="left")
        base.add_column("split")
        base.add_column("makespan", justify="right")
        base.add_column("kerncast's vs it", justify="right")
        for name, seconds in result.baselines.items():
            label = name if name != "oracle" else f"oracle ({result.oracle_fraction:.0%} on the first)"
            base.add_row(label, _fmt(seconds), f"{result.makespan_s / seconds:.2f}x")
        console.print(base)

"""``kerncast devices`` and ``kerncast occupancy``."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.markup import escape

from kerncast.cli._app import app
from kerncast.cli._output import console, print_json
from kerncast.devices import Device, get_device, list_devices, occupancy

devices_app = typer.Typer(
    help="List the GPUs kerncast knows, or show one.\n\nExample: kerncast devices show h100",
    invoke_without_command=True,
)
app.add_typer(devices_app, name="devices")

JsonOpt = Annotated[bool, typer.Option("--json", help="Write JSON for scripts.")]


def _summary(dev: Device) -> dict:
    from kerncast.sim import machine_for  # noqa: PLC0415 (on use: the simulator)

    machine = machine_for(dev)
    return {
        "key": dev.key,
        "name": dev.name,
        "vendor": dev.vendor,
        "architecture": dev.architecture,
        "compute_capability": dev.compute_capability,
        "sm_count": dev.compute.sm_count,
        "boost_clock_mhz": dev.compute.boost_clock_mhz,
        "peak_fp32_gflops": round(dev.peak_fp32_gflops, 1),
        "peak_bandwidth_gbs": dev.memory.peak_bandwidth_gbs,
        "l2_kib": dev.memory.l2_kib,
        "aliases": list(dev.aliases),
        # the calibration the static model predicts it from, and whether it is another
        # device's adapted to this spec
        "calibration": machine.adapted_from or machine.calibration.device,
        "calibration_adapted": bool(machine.assumptions),
    }


@devices_app.callback()
def devices(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """List every device spec that kerncast ships."""
    if ctx.invoked_subcommand is not None:
        return
    rows = [_summary(d) for d in list_devices()]
    if as_json:
        print_json(rows)
        return
    table = Table(title=f"{len(rows)} devices", title_justify="left")
    left = ("key", "name", "arch", "calibration")
    for col in ("key", "name", "arch", "CC", "SMs", "GHz", "fp32 TFLOP/s", "GB/s", "L2 MiB",
                "calibration"):
        table.add_column(col, justify="left" if col in left else "right")
    for r in rows:
        table.add_row(
            r["key"], r["name"], r["architecture"], r["compute_capability"], str(r["sm_count"]),
            f"{r['boost_clock_mhz'] / 1000:.2f}", f"{r['peak_fp32_gflops'] / 1000:.1f}",
            f"{r['peak_bandwidth_gbs']:.0f}", f"{r['l2_kib'] / 1024:.1f}",
            f"{r['calibration']}, adapted" if r["calibration_adapted"] else "own",
        )
    console.print(table)
    console.print("calibration: what the static model predicts a device from; 'kerncast "
                  "devices show KEY' lists what an adapted one assumes")


@devices_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="Device name or alias, e.g. h100.")],
    as_json: JsonOpt = False,
) -> None:
    """Show every field of one device spec, with its source.

    Example: kerncast devices show gtx580 --json
    """
    dev = get_device(name)
    if as_json:
        print_json(dev.model_dump(mode="json"))
        return
    console.print(f"[bold]{dev.name}[/] ({dev.key}; aliases: {', '.join(dev.aliases) or '-'})")
    console.print(f"{dev.architecture}, compute capability {dev.compute_capability}, {dev.year}")
    _show_calibration(dev)
    for section in ("compute", "limits", "allocation", "memory", "throughput"):
        table = Table(title=section, title_justify="left", show_header=False)
        table.add_column("field")
        table.add_column("value", justify="right")
        table.add_column("source", overflow="fold")
        sec = getattr(dev, section)
        for field in type(sec).model_fields:
            if field in ("source", "sources", "notes"):
                continue
            table.add_row(field, str(getattr(sec, field)), dev.source_of(section, field))
        console.print(table)
        if sec.notes:
            console.print(f"  note: {escape(str(sec.notes))}")


def _show_calibration(dev: Device) -> None:
    """Which calibration the static model predicts ``dev`` from, and, where it is another
    device's, every assumption that rests on."""
    from kerncast.sim import machine_for  # noqa: PLC0415 (on use: the simulator)

    machine = machine_for(dev)
    if not machine.assumptions:
        measured = machine.calibration.provenance.get("measured_at", "at an unknown date")
        console.print(f"static model: its own calibration (measured {escape(str(measured))})")
        for what, source in machine.borrowed().items():
            console.print(f"  - {escape(what)}: from {escape(source)}'s calibration (the same "
                          "architecture; its own has none)")
        return
    console.print(f"static model: no calibration of its own; "
                  f"{escape(str(machine.adapted_from))}'s adapted to this spec, assuming:")
    for line in machine.assumptions:
        console.print(f"  - {escape(line)}")


@app.command("occupancy")
def occupancy_cmd(
    device: Annotated[str, typer.Option("--device", "-d", help="Device name, alias or spec file.")],
    block: Annotated[int, typer.Option("--block", "-b", help="Threads per block.")],
    regs: Annotated[int, typer.Option("--regs", "-r", help="Registers per thread.")],
    smem: Annotated[int, typer.Option("--smem", "-s", help="Shared memory per block, bytes.")] = 0,
    carveout: Annotated[
        float | None, typer.Option(help="Preferred shared-memory carve-out, percent.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Resident blocks and warps per SM, and the resource that limits them.

    Example: kerncast occupancy --device h100 --block 256 --regs 32 --smem 0 --json
    """
    occ = occupancy(device, block, regs, smem, carveout_percent=carveout)
    if as_json:
        print_json(occ.to_dict())
        return
    console.print(
        f"{occ.device}: {occ.blocks_per_sm} blocks / {occ.warps_per_sm} warps per SM, "
        f"occupancy {occ.occupancy:.3f}, limited by [bold]{occ.limiting}[/]"
    )
    table = Table(show_header=True)
    table.add_column("resource")
    table.add_column("blocks it allows", justify="right")
    for name, value in occ.limits.items():
        table.add_row(name, "unlimited" if value < 0 else str(value))
    console.print(table)

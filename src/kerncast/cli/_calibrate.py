"""``kerncast calibrate``: measure a GPU's micro-benchmark figures."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from kerncast._errors import InputError
from kerncast.calibrate import (CALIBRATION_DIR, PARTS, load_calibration, run_calibration,
                                update_part)
from kerncast.cli._app import app
from kerncast.cli._output import console, err_console, print_json
from kerncast.devices import get_device


@app.command("calibrate")
def calibrate_cmd(
    device: Annotated[str, typer.Option("--device", "-d", help="Spec of the GPU being measured.")],
    out: Annotated[Path | None, typer.Option(help="Calibration file to write.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the calibration as JSON.")] = False,
    only: Annotated[str | None, typer.Option(
        help="Measure one part again and keep the rest of the device's calibration: "
             "'atomics', 'access' (scattered stores and L1 gathers), 'launch' (launch "
             "overhead, block dispatch rate, a block slot's turnaround by warps per block), "
             "'dram' (the DRAM's latency under load), 'spread' (how single DRAM reads' "
             "latencies spread at light load), 'shared' (the shared-memory "
             "path's cycles per access) or 'bandwidth' (the DRAM's read, write and copy "
             "bandwidths, in grid-stride loops and over grids of one element a "
             "thread).")] = None,
) -> None:
    """Run the calibration micro-benchmarks on GPU 0 (needs CuPy and an NVIDIA GPU).

    Measures instruction latencies and throughputs, memory latencies (L1, L2, DRAM,
    shared), bandwidths, the DRAM's latency under load, cache sizes, atomics, barriers
    and launch overhead.
    Clocks are read, never set.

    Example: kerncast calibrate --device h100 --out h100-sxm.json
    """
    spec = get_device(device)
    log = (lambda msg: None) if as_json else (lambda msg: err_console.print(f"  {escape(str(msg))}"))
    target = out or CALIBRATION_DIR / f"{spec.key}.json"
    if only is not None:
        result = _update(only, spec, target, log)
    else:
        result = run_calibration(spec, progress=log)
    reported = result.provenance["device_name"]
    if not _known(reported) or get_device(reported).key != spec.key:
        err_console.print(f"warning: GPU 0 reports itself as {reported!r}, not {spec.name}")
    result.save(target)
    if as_json:
        print_json(result.to_dict())
    else:
        console.print(f"calibration of {spec.key} written to {target}")


def _update(part: str, spec, target: Path, log):
    """The calibration at ``target`` (else the shipped one) with ``part`` measured again."""
    if part not in PARTS:
        raise InputError(f"--only {part!r}: the parts that can be measured alone are "
                         + ", ".join(repr(p) for p in PARTS))
    source = target if target.exists() else CALIBRATION_DIR / f"{spec.key}.json"
    if not source.exists():
        raise InputError(f"no calibration of {spec.key} to update at {source}; run "
                         f"'kerncast calibrate --device {spec.key}' without --only first")
    return update_part(load_calibration(source), spec, part, progress=log)


def _known(name: str) -> bool:
    try:
        get_device(name)
    except Exception:  # an unknown device name: warn below
        return False
    return True

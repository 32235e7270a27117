"""What the GPU probes in tools/ share: the spin kernel ahead of each timed launch, the
timing, the SASS of the probe source and the provenance of the output, or the
calibration's own bench and a JSON file of rows. Needs CuPy, nvcc, cuobjdump and NVML;
the GPU's clocks are read, never set."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) { }
}
"""


def timed(cp, spin, kernel, grid, block, args, reps: int = 5) -> float:
    """Median seconds of one launch, a spin kernel ahead of the start event."""
    kernel(grid, block, args)
    cp.cuda.runtime.deviceSynchronize()
    times = []
    for _ in range(reps):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        spin((1,), (1,), (np.int64(100_000),))
        start.record()
        kernel(grid, block, args)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
    return float(np.median(times))


def batched(cp, kernel, grid: int, block: int, args, launches: int = 5,
            batches: int = 5) -> float:
    """Median seconds a launch over ``batches`` batches of ``launches`` launches back to
    back (CUDA events around each batch), after one untimed launch."""
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    kernel((grid,), (block,), args)
    per = []
    for _ in range(batches):
        start.record()
        for _ in range(launches):
            kernel((grid,), (block,), args)
        stop.record()
        stop.synchronize()
        per.append(cp.cuda.get_elapsed_time(start, stop) * 1e-3 / launches)
    return float(np.median(per))


def warm_up(cp, launch, seconds: float = 0.5) -> None:
    """Calls ``launch`` (a launch of the probe's kernel) back to back, 20 at a time, for
    about ``seconds``, so that the GPU's clocks have risen."""
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    while True:
        for _ in range(20):
            launch()
        stop.record()
        stop.synchronize()
        if cp.cuda.get_elapsed_time(start, stop) > seconds * 1e3:
            return


#: the full-occupancy launch the issue-rate probes run: 8 blocks of 256 threads an SM,
#: 16 warps on each of its 4 schedulers
BLOCK, PER_SM, SCHEDULERS = 256, 8, 4


def full_occupancy(cp, dtype) -> tuple[dict, int, int, object]:
    """(device properties, SMs, grid of :data:`PER_SM` blocks an SM, an output array of a
    value a thread in ``dtype``) for a probe of GPU 0."""
    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    return props, sms, sms * PER_SM, cp.zeros(sms * PER_SM * BLOCK, dtype)


def sm_clock_mhz() -> float:
    """The SM clock nvidia-smi reads now on GPU 0 (NaN where it reads none)."""
    text = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits",
                           "-i", "0"], capture_output=True, text=True, check=False).stdout
    return float(text.split()[0]) if text.strip() else float("nan")


def sass(source: str) -> str:
    """``cuobjdump -sass`` of ``source`` compiled for sm_90."""
    with tempfile.TemporaryDirectory() as tmp:
        src, cubin = Path(tmp) / "probe.cu", Path(tmp) / "probe.cubin"
        src.write_text(source)
        subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-O3", str(src), "-o", str(cubin)],
                       check=True)
        return subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True,
                              text=True, check=True).stdout


def provenance(props: dict, pynvml, method: str) -> dict:
    """The device, driver, time and method an output's rows were measured with."""
    name = props["name"]
    return {"device_name": name.decode() if isinstance(name, bytes) else name,
            "sm_count": props["multiProcessorCount"],
            "driver": pynvml.nvmlSystemGetDriverVersion(),
            "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(), "method": method}


def calibration_bench(doc: str, argv: list[str] | None, device: str = "h200"):
    """(the calibration's bench on GPU 0 with ``--device``'s spec, the parsed ``--out``),
    or (None, None) after printing why there is no GPU to run on. ``doc`` is the probe's
    module docstring, its first line the command's help."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--device", default=device, help="the spec of GPU 0")
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    from kerncast import KerncastError  # noqa: PLC0415
    from kerncast.calibrate._run import _Bench  # noqa: PLC0415 (the calibration's timing)
    from kerncast.devices import get_device  # noqa: PLC0415

    try:
        return _Bench(get_device(args.device)), args.out
    except KerncastError as exc:
        print(exc, file=sys.stderr)
        return None, None


def stream_wave(sms: int, warps: int, threads: int, loads: int,
                nbytes: int) -> tuple[int, int, int]:
    """(blocks, threads in all, trips) of one wave of ``warps`` warps an SM, in blocks of
    ``threads``, streaming ``nbytes`` of 4-byte words with ``loads`` loads a thread a
    trip (the loaded-latency probes' shape)."""
    blocks = sms * warps * 32 // threads
    total = blocks * threads
    return blocks, total, nbytes // 4 // (total * loads)


def write_rows(path: str, bench, command: str, rows: list[dict], **extra) -> None:
    """The probe's rows at ``path`` (nothing where it is empty), with the device's name,
    its SM count and clock, the time of the run and the command."""
    if not path:
        return
    with open(path, "w") as f:
        json.dump({"device_name": bench.name, "sm_count": bench.sms,
                   "clock_hz": round(bench.clock_hz), **extra,
                   "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(
                       timespec="seconds"),
                   "command": command, "rows": rows}, f, indent=1)


def measure_or_compare(doc: str, measure, compare) -> int:
    """A probe's command line: ``measure()`` (on the GPU) printed as JSON, or with
    ``--compare FILE`` ``compare(FILE, --device)`` (the static model beside a measured
    file, no GPU needed). ``doc`` is the probe's module docstring, its first paragraph the
    command's help."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--compare", type=Path, help="a measured JSON: print the static "
                        "model's predictions of its launches beside it (no GPU needed)")
    parser.add_argument("--device", default="h200", help="the device to predict for")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    if args.compare:
        return compare(args.compare, args.device)
    json.dump(measure(), sys.stdout, indent=1)
    return 0

"""Measure the user kernels on a GPU, through the user's path, into a dataset.

    PYTHONPATH=src python3 tools/userkernels_gpu.py --device h100 --out $OUT/userkernels-h100 \
        tests/userkernels/large/*.toml tests/userkernels/*.toml [--seconds 500]

For every launch file (and every configuration of its ``[tune_params]``): the ``times``
row of ``kerncast.measure`` (CuPy, the user's kernel and launch as the file gives them);
for the file's own configuration also the sampled runs (every L2 state) and a cold run
of the whole grid (``samples`` rows), and a live ``sampling`` prediction
(``kerncast.predict(..., model="sampling")``), written to ``live.json`` with what it
rests on. Rows name the launch file in ``size``. OpenCL sources are skipped (CuPy runs
CUDA and PTX). Work stops starting once ``--seconds`` have passed; what was done is
written. Nothing here reads a model: the rows are measurements, the predictions live.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def _launches(path: Path, every: bool):
    from kerncast.core import load_launch_file

    lf = load_launch_file(path)
    configs = lf.configs() if every else [dict(lf.raw.get("params", {}))]
    default = dict(lf.raw.get("params", {}))
    for params in configs:
        kernel, launch = lf.launch(params)
        name = f"{path.parent.name}/{path.stem}" if path.parent.name == "large" else path.stem
        yield kernel, dataclasses.replace(launch, size=name), {**default, **params} == default


def _live(kernel, launch, device: str, truth: float | None) -> dict:
    import kerncast

    start = time.time()
    try:
        p = kerncast.predict(kernel, launch, model="sampling", device=device)
    except kerncast.KerncastError as exc:
        return {"error": str(exc)}
    based = p.based_on
    return {"predicted_s": p.seconds, "measured_s": truth,
            "error_pct": None if not truth else 100 * (p.seconds - truth) / truth,
            "sample_seconds": based.get("sample_seconds"), "method": based.get("method"),
            "points": based.get("points"), "sampled_runs": based.get("sampled_runs"),
            "elapsed_s": time.time() - start}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--device", default="h100")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--seconds", type=float, default=500)
    args = ap.parse_args()
    from kerncast.data import Dataset
    from kerncast.measure import CupyBackend
    from kerncast.measure._api import monitor_for
    from kerncast.measure._job import user_job
    from kerncast.measure._samples import measure_full, measure_samples

    deadline = time.time() + args.seconds
    backend = CupyBackend(device=args.device)
    monitor = monitor_for(backend)
    times, samples, live = [], [], []
    for path in args.files:
        if path.suffix != ".toml":
            continue
        for kernel, launch, own in _launches(path, every=True):
            if time.time() > deadline:
                print(f"stopped before {path}: out of time", file=sys.stderr)
                break
            if kernel.language == "opencl":
                break
            job = user_job(kernel, launch)
            row = backend.measure(job, monitor=monitor)
            times.append(row)
            print(f"{launch.size} {launch.label()}: {row['status']} "
                  f"{row.get('time_median_s', float('nan')) * 1e6:.1f} us", file=sys.stderr)
            if not own or row["status"] != "ok":
                continue
            samples += measure_samples(backend, job, monitor=monitor)
            samples += measure_full(backend, job, monitor=monitor)
            live.append({"file": str(path.relative_to(ROOT) if path.is_absolute() else path),
                         "kernel": kernel.name, "size": launch.size, "config": launch.label(),
                         "blocks": launch.blocks,
                         **_live(kernel, launch, args.device, row["time_median_s"])})
    data = Dataset(times=pd.DataFrame(times), samples=pd.DataFrame(samples))
    data.write(args.out)
    (args.out / "live.json").write_text(json.dumps({
        "device": backend.device_key, "device_name": backend.describe()["device_name"],
        "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(), "rows": live},
        indent=1, default=str))
    print(f"{len(times)} times rows, {len(samples)} samples rows, {len(live)} live predictions",
          file=sys.stderr)


if __name__ == "__main__":
    main()

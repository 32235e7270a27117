"""``kerncast scale`` on one's own kernels, checked against the GPU at the targets.

    PYTHONPATH=src python3 tools/scale_own_check.py --device h200 --out $OUT/scale-own-h200.json \
        tests/userkernels/large/*.toml [--sm-counts 8,16,32,64,96] [--seconds 400]

For every launch file (CUDA and PTX; the file's own configuration): the base run measured
here at the whole GPU as ``kerncast scale FILE`` measures it (time, NVML power, Nsight
Compute counters; :func:`kerncast.measure.measure_base_run`), the scaling
surfaces' prediction at each SM count of this GPU (the model fitted on the corpus's shipped
data, which holds none of these kernels), and the launch timed at each of those SM counts
(``kerncast.measure``, a green context). Written as each kernel ends (JSON: per kernel the
base run and per target the predicted and measured time), so that an interrupted run
keeps what it measured. Work stops starting once ``--seconds`` have passed. Last line:
``scale own kernels: N kernels, time error mean X% median Y% over P targets``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def _one(path: Path, device: str, sm_counts: list[int]) -> dict:
    from kerncast.models import own_surface
    from kerncast.core import load_launch_file
    from kerncast.measure import measure, measure_base_run

    lf = load_launch_file(path)
    kernel, launch = lf.launch(dict(lf.raw.get("params", {})))
    if kernel.language == "opencl":
        raise ValueError("an OpenCL kernel: the CUDA backends do not run it")
    run = measure_base_run(kernel, launch, device=device)
    targets = ",".join(f"{device}:{n}" for n in sm_counts)
    table, info = own_surface(run, targets)
    rows = []
    for r in table.itertuples(index=False):
        row = measure(kernel, launch, device=device, sm_count=int(r.sm_count)).row
        measured = float(row["time_median_s"]) if row.get("status") == "ok" else float("nan")
        rows.append({"device": r.device, "sm_count": int(r.sm_count),
                     "predicted_s": float(r.time_s), "predicted_power_w": float(r.power_w),
                     "measured_s": measured, "status": row.get("status"),
                     "error_pct": 100 * (float(r.time_s) / measured - 1),
                     "sm_clock_mhz_before": row.get("sm_clock_mhz_before"),
                     "sm_clock_mhz_after": row.get("sm_clock_mhz_after")})
    return {"launch_file": str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path),
            "kernel": run.kernel, "base_run": run.to_dict(), "trained_on": info["trained_on"],
            "targets": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--device", default="h200")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sm-counts", default="8,16,32,64,96")
    ap.add_argument("--seconds", type=float, default=400.0)
    args = ap.parse_args()
    sm_counts = [int(s) for s in args.sm_counts.split(",") if s]
    started = time.time()
    done: list[dict] = []
    for path in args.files:
        if time.time() - started > args.seconds:
            print(f"stopped before {path}: {args.seconds:.0f} s passed", flush=True)
            break
        t0 = time.time()
        try:
            got = _one(path.resolve(), args.device, sm_counts)
        except Exception as exc:  # noqa: BLE001 (a kernel that fails is a result)
            got = {"launch_file": str(path), "error": f"{type(exc).__name__}: {exc}"[:500]}
        got["seconds"] = round(time.time() - t0, 1)
        done.append(got)
        errors = [t["error_pct"] for t in got.get("targets", [])]
        print(f"{path.name}: {got.get('error') or ' '.join(f'{e:+.1f}%' for e in errors)} "
              f"({got['seconds']} s)", flush=True)
        args.out.write_text(json.dumps({"device": args.device, "measured_at":
                                        dt.datetime.now().isoformat(timespec="seconds"),
                                        "kernels": done}, indent=1, default=str) + "\n")
    errors = np.array([abs(t["error_pct"]) for k in done for t in k.get("targets", [])
                       if np.isfinite(t["error_pct"])])
    ok = sum(1 for k in done if "targets" in k)
    print(f"scale own kernels: {ok} kernels, time error mean "
          f"{errors.mean() if len(errors) else float('nan'):.1f}% median "
          f"{np.median(errors) if len(errors) else float('nan'):.1f}% over {len(errors)} targets")


if __name__ == "__main__":
    main()

"""The static model's time at every SM count of the scaling surfaces, for every swept instance.

    python tools/static_sm_sweep.py [--jobs 2] [--out data/probes/static-sm-sweep.parquet]

For each kernel instance (kernel, size, config) with an SM-count sweep in data/h100 or
data/h200, the static predictor (no GPU run) predicts its launch on the H100 and the H200
at each SM count of ``kerncast.models._scaling.SM_AXIS`` (``predict_launch(...,
sm_count=N)``). ``benchmarks/scaling_accuracy.py`` scores this what-if beside the
scaling-surfaces models. Every instance runs in its own process; the output is rewritten
as each instance ends, so a stopped run keeps what it did, and a run with an existing
output predicts only the instances it lacks. Columns: the instance, device, sm_count,
static_s (NaN where the predictor failed), bottleneck, error, seconds (to predict) and
provenance (kerncast commit, when).
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

INSTANCE = ["kernel", "size", "config"]
DEVICES = {"h100": "h100-sxm", "h200": "h200"}


def instances() -> list[dict]:
    """One launch row per swept instance (the whole-GPU ``times`` row where there is one)."""
    from kerncast.data import Dataset

    rows = []
    for name in DEVICES:
        t = Dataset.read(ROOT / "data" / name).ok_times()
        swept = t.loc[t["experiment"] == "sm-sweep", INSTANCE].drop_duplicates()
        whole = t[t["experiment"] == "times"].merge(swept, on=INSTANCE)
        rows.append(whole.drop_duplicates(INSTANCE))
    both = pd.concat(rows).drop_duplicates(INSTANCE)
    return both.to_dict("records")


def _predict(row: dict) -> list[dict]:
    from kerncast.models._rows import corpus_launch
    from kerncast.models._scaling import SM_AXIS
    from kerncast.sim import machine_for, predict_launch

    out = []
    kernel, config = corpus_launch(row)
    source, launch = kernel.instance(config, row["language"])
    for device in DEVICES.values():
        machine = machine_for(device)
        for sm in SM_AXIS:
            started = time.perf_counter()
            entry = {**{k: row[k] for k in INSTANCE}, "device": device, "sm_count": sm}
            try:
                res = predict_launch(source, launch, device, machine=machine, sm_count=sm)
                entry |= {"static_s": res.seconds, "bottleneck": res.bottleneck, "error": ""}
            except Exception as exc:  # noqa: BLE001 (a failed prediction is a row)
                entry |= {"static_s": np.nan, "bottleneck": "",
                          "error": f"{type(exc).__name__}: {exc}"[:200]}
            entry["seconds"] = time.perf_counter() - started
            out.append(entry)
    return out


def _provenance() -> dict:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    return {"kerncast_commit": commit or "unknown",
            "predicted_at": datetime.datetime.now(datetime.timezone.utc).isoformat()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "probes" / "static-sm-sweep.parquet")
    parser.add_argument("--kernels", help="comma-separated kernels (default: every swept one)")
    args = parser.parse_args()
    todo = instances()
    if args.kernels:
        keep = set(args.kernels.split(","))
        todo = [r for r in todo if r["kernel"] in keep]
    prov = _provenance()
    done: list[dict] = []
    if args.out.exists():
        kept = pd.read_parquet(args.out)
        have = set(kept[INSTANCE].itertuples(index=False, name=None))
        todo = [r for r in todo if tuple(r[k] for k in INSTANCE) not in have]
        done = kept.to_dict("records")
        print(f"{len(have)} instances already in {args.out}; {len(todo)} to predict",
              file=sys.stderr)
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs, max_tasks_per_child=1) as pool:
        futures = {pool.submit(_predict, row): row for row in todo}
        for n, fut in enumerate(as_completed(futures), 1):
            row = futures[fut]
            try:
                done += [r | prov for r in fut.result()]
            except Exception as exc:  # noqa: BLE001 (a crashed worker is rows too)
                done += [{**{k: row[k] for k in INSTANCE}, "device": d, "sm_count": np.nan,
                          "static_s": np.nan, "bottleneck": "", "seconds": np.nan,
                          "error": f"{type(exc).__name__}: {exc}"[:200]} | prov
                         for d in DEVICES.values()]
            tmp = args.out.with_suffix(".tmp")
            pd.DataFrame(done).to_parquet(tmp, index=False)
            tmp.replace(args.out)
            print(f"  {n}/{len(todo)} {row['kernel']} {row['size']} {row['config']} "
                  f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    frame = pd.DataFrame(done)
    failed = int(frame["static_s"].isna().sum())
    print(f"{len(frame)} predictions ({len(todo)} instances new), {failed} failed, "
          f"{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

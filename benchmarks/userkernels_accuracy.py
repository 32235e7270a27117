"""The predictors on kernels no model was tuned on: the user kernels measured on a GPU.

    python benchmarks/userkernels_accuracy.py --device h100 [--jobs 2]

``data/userkernels-<device>`` holds ``times`` rows of the launch files of
``tests/userkernels`` (and ``tests/userkernels/large``, the same kernels at GPU sizes),
measured through the user's path (``tools/userkernels_gpu.py``), and ``live.json``, the
live ``sampling`` predictions made there. Each row is predicted here statically from its
launch file alone; the script prints the error of each launch, the rank correlation of
predicted and measured time over the tuned kernel's configurations, and the live
sampling errors. None of these kernels, sizes or launches entered any fit or constant:
they were written after the models were. The last line is ``userkernels static MAPE: <X>%
(large <Y>%) spearman: <Z> sampling MAPE: <W>%``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
KERNELS = ROOT / "tests" / "userkernels"


def _predict(row: dict, device: str) -> dict:
    import kerncast
    from kerncast.core import load_launch_file

    started = time.perf_counter()
    lf = load_launch_file(KERNELS / f"{row['size']}.toml")
    try:
        kernel, launch = lf.launch(json.loads(row["tunables"]))
        p = kerncast.predict(kernel, launch, device=device)
    except kerncast.KerncastError as exc:
        return {**row, "predicted_s": np.nan, "error": str(exc)[:200],
                "seconds": time.perf_counter() - started}
    return {**row, "predicted_s": p.seconds, "bottleneck": p.bottleneck, "error": "",
            "seconds": time.perf_counter() - started}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="h100")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    from kerncast.data import Dataset

    root = ROOT / "data" / f"userkernels-{args.device}"
    times = Dataset.read(root).ok_times()
    rows = times[["kernel", "size", "config", "tunables", "time_median_s"]].to_dict("records")
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        res = pd.DataFrame(list(pool.map(lambda r: _predict(r, args.device), rows)))
    res["ape"] = 100 * (res["predicted_s"] - res["time_median_s"]).abs() / res["time_median_s"]
    res["large"] = res["size"].str.startswith("large/")
    pd.set_option("display.width", 160)
    one = res.groupby("size").agg(rows=("ape", "size"), measured_us=("time_median_s", "median"),
                                  predicted_us=("predicted_s", "median"), ape=("ape", "mean"))
    one[["measured_us", "predicted_us"]] *= 1e6
    print(one.round(1).to_string())
    tuned = res[res["size"].str.endswith("conv1d_tuned")]
    rhos = []
    for size, group in tuned.groupby("size"):
        rho = spearmanr(group["predicted_s"], group["time_median_s"]).statistic
        best = group.loc[group["predicted_s"].idxmin()]
        regret = 100 * (best["time_median_s"] / group["time_median_s"].min() - 1)
        rhos.append(rho)
        print(f"{size}: {len(group)} configurations, spearman {rho:.2f}, the predicted best "
              f"({best['config']}) runs {regret:.1f}% slower than the measured best")
    for _, r in res[res["error"] != ""].iterrows():
        print(f"failed: {r['size']} {r['config']}: {r['error']}")
    live = json.loads((root / "live.json").read_text())["rows"]
    sampled = [r for r in live if r.get("error_pct") is not None]
    large = [r for r in sampled if r["size"].startswith("large/")]
    for r in large:
        print(f"live sampling {r['size']}: {r['predicted_s'] * 1e6:.1f} us against "
              f"{r['measured_s'] * 1e6:.1f} us ({r['error_pct']:+.1f}%), {r['method'][:60]}")
    mape = res["ape"].mean()
    mape_large = res.loc[res["large"], "ape"].mean()
    sampling = float(np.mean([abs(r["error_pct"]) for r in large])) if large else float("nan")
    print(f"rows {len(res)}, predicted {res['predicted_s'].notna().sum()}, median "
          f"s/prediction {res['seconds'].median():.2f}; live sampling over {len(large)} large "
          f"launches, {len(sampled) - len(large)} small ones measured whole")
    if large:
        cost = [100 * r["sample_seconds"] / r["measured_s"] for r in large]
        whole = sum("whole launch" in str(r.get("method")) for r in large)
        print(f"live sampling overhead over the large launches (sampled runs / launch): mean "
              f"{np.mean(cost):.0f}%, median {np.median(cost):.0f}%; {whole} of {len(large)} "
              "measured whole where the samples could not be trusted")
    print(f"userkernels static MAPE: {mape:.1f}% (large {mape_large:.1f}%) spearman: "
          f"{np.nanmedian(rhos) if rhos else float('nan'):.2f} sampling MAPE: {sampling:.1f}%")


if __name__ == "__main__":
    main()

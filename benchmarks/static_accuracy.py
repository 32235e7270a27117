"""Accuracy of the static predictor against a measured dataset (no GPU needed).

    python benchmarks/static_accuracy.py --device h100 [--kernels a,b] [--sizes large]
        [--per-kernel N] [--jobs 2] [--out results.parquet] [--calibration h100-sxm]
    python benchmarks/static_accuracy.py --results a.parquet,b.parquet

Predicts every ``ok`` row of ``data/<device>/times`` at the whole GPU (experiment
``times``), from the kernel's source, the launch, the device spec and a calibration
only (each kernel and size in a process of its own, its progress on stderr; ``--out``
is written again as each one ends), and prints per
kernel the mean absolute percentage error and the Spearman rank correlation of
predicted and measured time across launch configurations (within each size, then the
median over the kernel's sizes) and the top-1 regret (the measured time of the
configuration predicted fastest over the fastest measured, per kernel and size, then
the mean over the kernel's sizes), then the same by size; the last line is ``static
MAPE: <X>% spearman: <Y> regret: <Z>%`` (mean APE over rows, median of per-kernel
Spearman, mean regret over every kernel and size with two or more configurations).
``--calibration h100-sxm`` predicts the H200 from the H100's calibration adapted to
the H200 spec. ``--per-kernel N`` keeps N evenly spaced configurations per kernel and
size (a quick look; the figure to report uses all rows).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def _rows(device: str, kernels: list[str] | None, per_kernel: int | None,
          sizes: list[str] | None = None) -> pd.DataFrame:
    from kerncast.data import Dataset
    from kerncast.devices import get_device

    data = Dataset.read(ROOT / "data" / device)
    t = data.ok_times()
    t = t[(t["experiment"] == "times") & (t["sm_count"] == get_device(device).compute.sm_count)]
    if kernels:
        t = t[t["kernel"].isin(kernels)]
    if sizes:
        t = t[t["size"].isin(sizes)]
    if per_kernel:
        parts = [g.iloc[np.unique(np.linspace(0, len(g) - 1, per_kernel).astype(int))]
                 for _, g in t.groupby(["kernel", "size"])]
        t = pd.concat(parts)
    return t.reset_index(drop=True)


def _predict_group(args) -> list[dict]:
    rows, calibration, budget = args
    from kerncast.models._rows import corpus_launch
    from kerncast.sim import machine_for, predict_launch

    out = []
    machine = None
    for row in rows:
        started = time.perf_counter()
        try:
            if machine is None:
                machine = machine_for(row["device"], calibration)
            kernel, config = corpus_launch(row)
            res = predict_launch(*kernel.instance(config, row["language"]), row["device"],
                                 machine=machine, budget=budget)
            out.append({**row, "predicted_s": res.seconds, "bottleneck": res.bottleneck,
                        "seconds": time.perf_counter() - started, "error": ""})
        except Exception as exc:  # noqa: BLE001 (a kernel the predictor fails on is a result)
            out.append({**row, "predicted_s": np.nan, "bottleneck": "",
                        "seconds": time.perf_counter() - started,
                        "error": f"{type(exc).__name__}: {exc}"[:200]})
    return out


def _isolated(args) -> list[dict]:
    """One kernel's rows in a process of their own: a kernel that exhausts the memory
    fails alone (its rows say so), and no memory outlives it."""
    rows = args[0]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=1) as pool:
        try:
            out = pool.submit(_predict_group, args).result()
        except BrokenProcessPool:
            out = [{**row, "predicted_s": np.nan, "bottleneck": "", "seconds": np.nan,
                    "error": "the prediction process was killed (out of memory?)"}
                   for row in rows]
    ok = [r for r in out if r["error"] == ""]
    ape = [100 * abs(r["predicted_s"] - r["time_median_s"]) / r["time_median_s"] for r in ok]
    print(f"  {rows[0]['kernel']} {rows[0]['size']}: {len(ok)}/{len(rows)} predicted, "
          f"MAPE {np.mean(ape) if ape else float('nan'):.1f}%, "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return out


def _spearman(group: pd.DataFrame) -> float:
    from scipy.stats import spearmanr

    ok = group.dropna(subset=["predicted_s"])
    if len(ok) < 3 or ok["time_median_s"].nunique() < 2:
        return np.nan
    if ok["predicted_s"].nunique() < 2:
        return 0.0
    return float(spearmanr(ok["predicted_s"], ok["time_median_s"]).statistic)


def _kernel_spearman(group: pd.DataFrame) -> float:
    """Median over the kernel's sizes of the rank correlation across configurations."""
    per_size = [_spearman(g) for _, g in group.groupby("size")]
    per_size = [x for x in per_size if x == x]
    return float(np.median(per_size)) if per_size else np.nan


def _regrets(res: pd.DataFrame) -> pd.Series:
    """Top-1 regret per (kernel, size), in percent, over the predicted configurations
    against the fastest measured one (NaN where fewer than two were measured)."""
    from kerncast.evaluate import top1_regret_pct

    def one(g: pd.DataFrame) -> float:
        ok = g.dropna(subset=["predicted_s"])
        if ok.empty:
            return np.nan
        return top1_regret_pct(ok["time_median_s"], ok["predicted_s"], g["time_median_s"].min())

    return res.groupby(["kernel", "size"]).apply(one, include_groups=False)


def _scored(results: list[dict]) -> pd.DataFrame:
    res = pd.DataFrame(results)
    res["ape"] = 100 * (res["predicted_s"] - res["time_median_s"]).abs() / res["time_median_s"]
    return res


def _report(res: pd.DataFrame) -> None:
    """The per-kernel and per-size tables, the failures and the last line."""
    regret = _regrets(res)
    table = res.groupby("kernel").apply(lambda g: pd.Series({
        "rows": len(g), "failed": int(g["predicted_s"].isna().sum()),
        "mape": g["ape"].mean(), "spearman": _kernel_spearman(g),
        "regret_pct": regret.loc[g.name].mean(),
        "s_per_pred": g["seconds"].median()}), include_groups=False)
    pd.set_option("display.width", 160)
    print(table.round(3).to_string())
    by_size = res.groupby("size").apply(lambda g: pd.Series({
        "rows": len(g), "mape": g["ape"].mean(), "median_ape": g["ape"].median(),
        "within_25pct": 100 * (g["ape"] <= 25).mean(),
        "spearman": np.nanmedian([_spearman(k) for _, k in g.groupby("kernel")] or [np.nan]),
        "regret_pct": regret.xs(g.name, level="size").mean()}),
        include_groups=False)
    print(by_size.round(2).to_string())
    failed = res[res["predicted_s"].isna()]
    for _, r in failed.drop_duplicates("kernel").iterrows():
        print(f"failed: {r['kernel']} {r['config']}: {r['error']}")
    mape = res["ape"].mean()
    print(f"rows {len(res)}, predicted {res['predicted_s'].notna().sum()}, "
          f"kernels {res['kernel'].nunique()}, "
          f"within 25%: {100 * (res['ape'] <= 25).mean():.1f}%, "
          f"median s/prediction {res['seconds'].median():.2f}")
    print(f"static MAPE: {mape:.1f}% spearman: {table['spearman'].median():.2f} "
          f"regret: {regret.mean():.1f}%")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="h100")
    ap.add_argument("--kernels", default="")
    ap.add_argument("--sizes", default="", help="comma-separated sizes (default: all)")
    ap.add_argument("--per-kernel", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--calibration", default=None)
    ap.add_argument("--out", default="")
    ap.add_argument("--budget", type=int, default=0,
                    help="instructions of a round the pipeline simulates (default: kerncast's)")
    ap.add_argument("--results", default="",
                    help="comma-separated --out files of earlier runs (e.g. shards by "
                         "--kernels): report them together, predicting nothing")
    args = ap.parse_args()
    if args.results:
        _report(pd.concat([pd.read_parquet(p) for p in args.results.split(",")],
                          ignore_index=True))
        return
    rows = _rows(args.device, [k for k in args.kernels.split(",") if k], args.per_kernel,
                 [s for s in args.sizes.split(",") if s])
    from kerncast.sim._pipeline import DEFAULT_BUDGET

    budget = args.budget or DEFAULT_BUDGET
    groups = [(g.to_dict("records"), args.calibration, budget)
              for _, g in rows.groupby(["kernel", "size"])]
    groups.sort(key=lambda g: -len(g[0]))
    results: list[dict] = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for part in as_completed([pool.submit(_isolated, g) for g in groups]):
            results.extend(part.result())
            if args.out:  # what is done so far, so that a stopped run keeps it
                _scored(results).to_parquet(args.out, index=False)
    _report(_scored(results))


if __name__ == "__main__":
    main()

"""A measurement campaign on every GPU of a machine against the same campaign on one GPU,
from the recorded runs of ``tools/multi_gpu_campaign.sh`` (``data/scaleout/``).

    python benchmarks/gpu_campaign_scaleout.py [--data data/scaleout]

For each recorded machine (files ``NAME-one-gpu.json`` and ``NAME-all-gpus.json``: the
same items, measured first on GPU 0 alone and then with ``--gpus all``; the rows of both
in ``NAME-one-gpu-times.parquet`` and ``NAME-all-gpus-times.parquet``, or in the
dataset ``data/<device>`` for the latter): items per second on one GPU and on all,
their ratio, and how the two runs' medians of the same items differ (the second run's
median against the first run's 95% interval, and the relative difference). Where the
rows carry their timeline, the time per item of the same items on one GPU and with all
GPUs busy (host contention) is printed too, and, as the reference for the agreement,
how two one-GPU runs of the same items differ.

A run whose two campaigns did not measure the same items (one stopped at its deadline
with items left) gives no rate ratio: its rows still give the agreement and the time per
item. Last line: ``gpu campaign speedup N GPUs: X (NAME)`` for the latest recorded run
(by its rows' times) whose two campaigns measured the same items: the code as it is now.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
KEY = ["kernel", "size", "config", "experiment", "sm_count_requested"]


def _rate(summary: dict) -> float:
    return summary["measured"] / summary["elapsed_s"] if summary["elapsed_s"] else 0.0


def _comparable(one: dict, every: dict) -> bool:
    """Whether both campaigns measured the same items: all of them, as many each."""
    return one["remaining"] == 0 and every["remaining"] == 0 and \
        one["measured"] == every["measured"]


def _measured_until(data: Path, name: str) -> str:
    """When the run's last one-GPU row was measured (ISO time; empty without rows)."""
    path = data / f"{name}-one-gpu-times.parquet"
    return str(pd.read_parquet(path, columns=["measured_at"])["measured_at"].max()) \
        if path.exists() else ""


def _gpus(summary: dict) -> int:
    return sum(1 for note in summary.get("notes", []) if note.startswith("GPU "))


def _per_item(frame: pd.DataFrame) -> pd.DataFrame:
    """Seconds between one row and the one before on the same GPU: an item's duration
    (the first item of a kernel includes its wait for inputs)."""
    gpu = frame["tool_versions"].map(lambda t: json.loads(t).get("gpu_pci_bus_id", ""))
    parts = []
    for _, rows in frame.assign(gpu=gpu).groupby("gpu"):
        rows = rows.sort_values("measured_at")
        stamps = pd.to_datetime(rows["measured_at"])
        parts.append(rows.assign(seconds=stamps.diff().dt.total_seconds(),
                                 inner=rows["kernel"].eq(rows["kernel"].shift())))
    return pd.concat(parts)


def compare(one: pd.DataFrame, every: pd.DataFrame) -> dict:
    """How the medians of the same items differ between the two runs."""
    both = one.merge(every, on=KEY, suffixes=("_1", "_n"))
    relative = (both["time_median_s_n"] / both["time_median_s_1"] - 1).abs()
    inside = both["time_median_s_n"].between(both["time_ci_low_s_1"], both["time_ci_high_s_1"])
    timed = _per_item(one).merge(_per_item(every), on=KEY, suffixes=("_1", "_n"))
    timed = timed[timed["inner_n"] & timed["inner_1"]]
    return {"items": len(both), "median_diff": relative.median(),
            "p90_diff": relative.quantile(0.9), "over_5pct": int((relative > 0.05).sum()),
            "inside_ci": inside.mean(),
            "item_slowdown": (timed["seconds_n"] / timed["seconds_1"]).median()}


def _rows(data: Path, name: str, kind: str, summary: dict) -> pd.DataFrame | None:
    path = data / f"{name}-{kind}-times.parquet"
    if path.exists():
        frame = pd.read_parquet(path)
    elif kind == "all-gpus":
        device = name.split("x")[0]
        frame = pd.read_parquet(ROOT / "data" / device / "times.parquet")
    else:
        return None
    return frame[frame["kernel"].isin(pd.read_parquet(data / f"{name}-one-gpu-times.parquet")
                                      ["kernel"].unique())] if kind == "all-gpus" else frame


def _run_to_run(data: Path, runs: list[str]) -> None:
    """The reference for the agreement above: two one-GPU runs of the same items (another
    run, another machine of the same GPU) differ by this much."""
    ones = {n: pd.read_parquet(p) for n in runs
            if (p := data / f"{n}-one-gpu-times.parquet").exists()}
    for (a, first), (b, second) in itertools.combinations(sorted(ones.items()), 2):
        both = first.merge(second, on=KEY, suffixes=("_1", "_2"))
        if len(both) < 0.9 * max(len(first), len(second)):
            continue
        relative = (both["time_median_s_2"] / both["time_median_s_1"] - 1).abs()
        print(f"run to run, one GPU each ({a} against {b}): same {len(both)} items: median "
              f"|difference| {relative.median():.2%}, 90th percentile "
              f"{relative.quantile(0.9):.2%}, {int((relative > 0.05).sum())} beyond 5%")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data" / "scaleout")
    args = parser.parse_args(argv)
    runs = sorted(p.name[:-len("-one-gpu.json")] for p in args.data.glob("*-one-gpu.json"))
    if not runs:
        print(f"no recorded runs in {args.data}; tools/multi_gpu_campaign.sh makes them")
        return 1
    latest = None
    for name in runs:
        one = json.loads((args.data / f"{name}-one-gpu.json").read_text())
        every = json.loads((args.data / f"{name}-all-gpus.json").read_text())
        gpus, speedup = _gpus(every), _rate(every) / _rate(one)
        ratio = f"{speedup:.2f}x" if _comparable(one, every) else \
            "no ratio: the two campaigns measured different items (a deadline stopped one)"
        print(f"{name}: one GPU {one['measured']} items in {one['elapsed_s']:.0f} s "
              f"({_rate(one):.2f}/s); {gpus} GPUs {every['measured']} items in "
              f"{every['elapsed_s']:.0f} s ({_rate(every):.2f}/s): {ratio}")
        for note in every.get("notes", []):
            print(f"  {note}")
        first, second = _rows(args.data, name, "one-gpu", one), _rows(args.data, name,
                                                                       "all-gpus", every)
        if first is not None and second is not None:
            stats = compare(first, second)
            print(f"  same {stats['items']} items: median |difference| "
                  f"{stats['median_diff']:.2%}, 90th percentile {stats['p90_diff']:.2%}, "
                  f"{stats['over_5pct']} beyond 5%; inside the one-GPU run's 95% interval: "
                  f"{stats['inside_ci']:.0%}; time per item with every GPU busy: "
                  f"x{stats['item_slowdown']:.2f}")
        when = _measured_until(args.data, name)
        if _comparable(one, every) and (latest is None or when > latest[1]):
            latest = (name, when, gpus, speedup)
    _run_to_run(args.data, runs)
    if latest is None:
        print("no recorded run measured the same items on one GPU and on all")
        return 1
    name, _, gpus, speedup = latest
    print(f"gpu campaign speedup {gpus} GPUs: {speedup:.2f} ({name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

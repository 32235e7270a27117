"""The static model's error spread on measured corpus launches, by bottleneck: the
intervals ``kerncast predict`` gives beside a static prediction.

    python benchmarks/static_accuracy.py --device h100 --per-kernel 3 --out st.parquet
    python tools/static_intervals.py st.parquet --device h100 \
        --out src/kerncast/models/trained/static-errors-h100.json

(``--per-kernel 0`` on both for every row: about 15 minutes on two cores.)

For each bottleneck the static model names (and for all launches together): the 10th,
50th and 90th percentiles of measured / predicted time over the launches it predicted,
how many launches and kernels they are. Each kernel weighs the same (its launches are
weighted 1 / its count), so that a kernel with many configurations does not set the
spread. A bottleneck with fewer than 20 launches or 5 kernels falls back to all.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

LEAST_ROWS, LEAST_KERNELS = 20, 5
QUANTILES = (0.1, 0.5, 0.9)


def weighted_quantiles(values: np.ndarray, weights: np.ndarray) -> list[float]:
    order = np.argsort(values)
    values, weights = values[order], weights[order]
    cumulative = (np.cumsum(weights) - 0.5 * weights) / weights.sum()
    return [float(np.interp(q, cumulative, values)) for q in QUANTILES]


def spread(rows: pd.DataFrame) -> dict:
    ratio = (rows["time_median_s"] / rows["predicted_s"]).to_numpy(float)
    weights = 1.0 / rows.groupby("kernel")["kernel"].transform("size").to_numpy(float)
    low, mid, high = weighted_quantiles(ratio, weights)
    return {"ratio_p10": round(low, 4), "ratio_p50": round(mid, 4), "ratio_p90": round(high, 4),
            "launches": int(len(rows)), "kernels": int(rows["kernel"].nunique())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="benchmarks/static_accuracy.py --out")
    parser.add_argument("--device", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--per-kernel", type=int, default=3,
                        help="the --per-kernel the results were predicted with (0: every row); "
                             "recorded in the output")
    args = parser.parse_args(argv)
    rows = pd.read_parquet(args.results)
    rows = rows[np.isfinite(rows["predicted_s"]) & (rows["predicted_s"] > 0)
                & (rows["time_median_s"] > 0)]
    if rows.empty:
        print(f"{args.results}: no predicted launches", file=sys.stderr)
        return 2
    table = {"all": spread(rows)}
    for bottleneck, group in rows.groupby("bottleneck"):
        if len(group) >= LEAST_ROWS and group["kernel"].nunique() >= LEAST_KERNELS:
            table[str(bottleneck)] = spread(group)
    record = {"device": args.device, "dataset": f"data/{args.device}",
              "measured_at": time.strftime("%Y-%m-%d"),
              "command": f"python benchmarks/static_accuracy.py --device {args.device} "
                         + (f"--per-kernel {args.per_kernel} " if args.per_kernel else "")
                         + f"--out RESULTS && python tools/static_intervals.py RESULTS --device "
                         f"{args.device} --per-kernel {args.per_kernel} --out {args.out.name}",
              "by_bottleneck": table}
    tmp = args.out.with_name(f".{args.out.name}.part")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    tmp.replace(args.out)
    for name, entry in table.items():
        print(f"{name}: x{entry['ratio_p10']:.2f} .. x{entry['ratio_p90']:.2f} "
              f"({entry['launches']} launches, {entry['kernels']} kernels)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How well does a later measurement repeat the committed one?

Compares the `times` rows that two datasets share (same kernel, size, configuration,
SM count and experiment), e.g. the committed data/h100 and a campaign of a few kernels
run later into another directory:

    python -m kerncast measure corpus --device h100 --out /tmp/again \
        --kernels matmul_tiled,reduce_tree,spmv_csr_vector,stencil7_naive,black_scholes \
        --experiments times --configs default --sizes medium,large
    python tools/repeatability.py data/h100 /tmp/again --json again.json

Prints one line per shared row (committed and new median, their ratio) and the share
of rows within 3%; `--json` writes the same as a file.
"""

from __future__ import annotations

import argparse
import json
import sys

import pandas as pd

from kerncast.data import Dataset

KEY = ["kernel", "size", "config", "sm_count", "experiment"]


def shared_rows(committed: pd.DataFrame, again: pd.DataFrame) -> pd.DataFrame:
    """Ok rows of both tables joined on KEY, with the ratio of the new median to the old."""
    cols = KEY + ["time_median_s", "time_iqr_s", "measured_at"]
    old = committed.loc[committed.status == "ok", cols]
    new = again.loc[again.status == "ok", cols]
    both = old.merge(new, on=KEY, suffixes=("_committed", "_again"))
    both["ratio"] = both.time_median_s_again / both.time_median_s_committed
    return both.sort_values(KEY).reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("committed", help="dataset directory measured first")
    parser.add_argument("again", help="dataset directory measured later")
    parser.add_argument("--tolerance", type=float, default=0.03)
    parser.add_argument("--json", help="write the rows and the summary to this file")
    args = parser.parse_args(argv)
    both = shared_rows(Dataset.read(args.committed).tables()["times"],
                       Dataset.read(args.again).tables()["times"])
    if both.empty:
        print("no ok times row is in both datasets", file=sys.stderr)
        return 2
    within = (both.ratio - 1).abs() <= args.tolerance
    for row, ok in zip(both.itertuples(), within):
        print(f"{row.kernel:22s} {row.size:6s} {row.config:28s} {row.sm_count:4d} "
              f"{row.time_median_s_committed * 1e3:10.4f} ms {row.time_median_s_again * 1e3:10.4f}"
              f" ms  {100 * (row.ratio - 1):+6.2f}%{'' if ok else '  <-- outside'}")
    summary = {"rows": len(both), "within": int(within.sum()), "tolerance": args.tolerance,
               "median_abs_change": float((both.ratio - 1).abs().median()),
               "max_abs_change": float((both.ratio - 1).abs().max())}
    print(f"within {100 * args.tolerance:g}%: {summary['within']}/{summary['rows']}  "
          f"median |change| {100 * summary['median_abs_change']:.2f}%  "
          f"max {100 * summary['max_abs_change']:.2f}%")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "rows": json.loads(both.to_json(orient="records"))},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

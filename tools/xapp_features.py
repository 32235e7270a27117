"""Profile every corpus C region (XAPP's 39 features) into data/xapp/features.parquet.

Resumable: rows already profiled are kept. Usage:
    python tools/xapp_features.py [--out data/xapp/features.parquet] [--kernels a,b] [--sizes small,medium]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from kerncast.cpu._corpus import LARGE_MAX_OPS, SIZES, build_features
from kerncast.cpu._profile import DEFAULT_PERIOD


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("data/xapp/features.parquet"))
    parser.add_argument("--kernels", default="")
    parser.add_argument("--sizes", default=",".join(SIZES))
    parser.add_argument("--period", type=int, default=DEFAULT_PERIOD)
    parser.add_argument("--max-ops", type=int, default=LARGE_MAX_OPS)
    args = parser.parse_args()
    start = time.monotonic()

    def progress(row: dict, n: int, total: int) -> None:
        note = row["error"] if row["status"] != "ok" else (
            f"slowdown {row['slowdown']:.1f}x" if row.get("slowdown") == row.get("slowdown") else "")
        print(f"[{n}/{total} {time.monotonic() - start:6.0f} s] {row['kernel']} {row['size']}: "
              f"{row['status']} {note}"[:300], flush=True)

    frame = build_features(args.out, [k for k in args.kernels.split(",") if k] or None,
                           [s for s in args.sizes.split(",") if s], period=args.period,
                           max_ops=args.max_ops, on_row=progress)
    failed = frame[frame.status != "ok"]
    print(f"{len(frame)} rows, {len(failed)} failed -> {args.out}")
    return 1 if len(failed) else 0


if __name__ == "__main__":
    sys.exit(main())

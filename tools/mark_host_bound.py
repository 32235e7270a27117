"""Mark the energy rows whose loop the host left idle as ``host_bound``.

    python tools/mark_host_bound.py data/h100 data/h200 [--dry-run]

Energy rows measured inside a green context before the driver backend replayed captured
graphs were looped with one launch call per launch (about 20 us each through the
Python bindings), so a kernel of a few microseconds kept the GPU busy for a fraction
of the loop and its power is mostly the idle GPU's. This applies the rule new rows are
measured under (:func:`kerncast.measure._energy.host_bound`: an ``ok`` row whose
``gpu_busy_fraction`` is below ``BUSY_MIN``) to a dataset's committed rows: their status
becomes ``host_bound`` and ``error`` says why; every reading is kept. A campaign with
``--retry-failed`` measures them again, and a new ``ok`` row supersedes the old one.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from kerncast.measure._energy import host_bound


def mark(path: Path, dry_run: bool) -> int:
    target = path / "energy.parquet"
    frame = pd.read_parquet(target)
    reasons = [host_bound(row) for row in frame.to_dict("records")]
    hit = pd.Series([r is not None for r in reasons], index=frame.index)
    if hit.any() and not dry_run:
        frame.loc[hit, "status"] = "host_bound"
        frame.loc[hit, "error"] = [r for r in reasons if r is not None]
        tmp = path / ".energy.parquet.tmp"
        frame.to_parquet(tmp, index=False)
        tmp.replace(target)
    by = frame[hit].groupby(["size", "sm_count"]).size()
    print(f"{path}: {int(hit.sum())} of {len(frame)} energy rows host_bound"
          + ("" if by.empty else " (" + ", ".join(f"{s} at {n} SMs: {c}" for (s, n), c in by.items()) + ")"))
    return int(hit.sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--dry-run", action="store_true", help="count, change nothing")
    args = parser.parse_args()
    for path in args.datasets:
        if not (path / "energy.parquet").is_file():
            parser.error(f"{path / 'energy.parquet'} does not exist: give a dataset directory "
                         "with an energy table (kerncast data summary lists them)")
    for path in args.datasets:
        mark(path, args.dry_run)


if __name__ == "__main__":
    main()

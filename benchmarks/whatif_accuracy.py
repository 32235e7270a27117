"""What-if gains of the static simulator against measured fixes of corpus kernels.

Each pair is a corpus launch with a limiter and a variant measured without it (same
size and device, 132 SMs, CUDA):

* bank conflicts: ``smem_bank_stride`` at strides 2-32 against stride 1 (256 threads a
  block); ``transpose_tiled`` with ``pad=0`` against ``pad=1`` (same tile and rows per
  thread);
* uncoalesced accesses: ``copy_strided`` at strides 2-32 against stride 1;
  ``copy_offset`` misaligned by 1-16 elements against 0; ``transpose_naive`` against
  ``transpose_tiled`` and ``matvec_rowwise`` against ``matvec_warp_row``, each at its
  default launch;
* divergence: ``branch_divergence`` with 2, 4 and 8 branches per warp and its
  data-dependent pattern against its uniform pattern 0.

Low occupancy has no measured pair in the corpus (no variant differs in occupancy
alone) and is not scored.

For each pair, the simulator predicts the first launch as it is and with the limiter
removed (``kerncast.what_if``; it never sees the fixed variant or any measurement) and
the predicted gain ``time as is / time fixed`` is compared with the measured
``time(first) / time(variant)``. Pairs whose measured gain is under 1.1x (the limiter
costs less than 10%) are listed but not counted: any prediction near 1x is "within 25%"
of them. The fixed variants of ``transpose`` and ``matvec`` are other kernels (a tiled
transpose adds shared memory and barriers; a warp per row adds a shuffle reduction), so
their measured gain is not the fix alone.

Run: .venv/bin/python benchmarks/whatif_accuracy.py [--device h100] [--sizes large,medium]
Last line: ``what-if pairs: N within 25%: M median error: X%``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from kerncast.data import Dataset  # noqa: E402
from kerncast.devices import get_device  # noqa: E402
from kerncast.models import what_if  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 0.25
LEAST_GAIN = 1.1

#: (fix, kernel, its tunables, fixed kernel, its tunables): None takes the default launch.
PAIRS: list[tuple[str, str, dict | None, str, dict | None]] = [
    *[("bank-conflicts", "smem_bank_stride", {"bx": 256, "stride": s},
       "smem_bank_stride", {"bx": 256, "stride": 1}) for s in (2, 4, 8, 16, 32)],
    *[("bank-conflicts", "transpose_tiled", {"pad": 0, "rpt": r, "tile": t},
       "transpose_tiled", {"pad": 1, "rpt": r, "tile": t}) for r, t in ((1, 32), (2, 32), (4, 32))],
    *[("uncoalesced", "copy_strided", {"bx": 256, "stride": s},
       "copy_strided", {"bx": 256, "stride": 1}) for s in (2, 4, 8, 16, 32)],
    *[("uncoalesced", "copy_offset", {"bx": 256, "offset": o},
       "copy_offset", {"bx": 256, "offset": 0}) for o in (1, 4, 16)],
    ("uncoalesced", "transpose_naive", None, "transpose_tiled", None),
    ("uncoalesced", "matvec_rowwise", None, "matvec_warp_row", None),
    *[("divergence", "branch_divergence", {"bx": 256, "pattern": p},
       "branch_divergence", {"bx": 256, "pattern": 0}) for p in (1, 3, 4, 5)],
]


def measured(device: str) -> pd.DataFrame:
    times = Dataset.read(ROOT / "data" / device).times
    keep = (times["status"] == "ok") & (times["language"] == "cuda") & \
        (times["sm_count"] == get_device(device).compute.sm_count) & \
        (times["experiment"] == "times")
    return times[keep]


def _row(times: pd.DataFrame, kernel: str, size: str, tunables: dict | None) -> pd.Series | None:
    from kerncast.corpus import get_kernel  # noqa: PLC0415

    label = get_kernel(kernel).launch(size, tunables or {}).label()
    rows = times[(times["kernel"] == kernel) & (times["size"] == size) &
                 (times["config"] == label)]
    return None if rows.empty else rows.iloc[0]


def score(device: str, sizes: list[str]) -> pd.DataFrame:
    times = measured(device)
    out = []
    for fix, kernel, tunables, fixed, fixed_tunables in PAIRS:
        for size in sizes:
            before = _row(times, kernel, size, tunables)
            after = _row(times, fixed, size, fixed_tunables)
            if before is None or after is None:
                print(f"  {kernel} {tunables} -> {fixed} at {size}: not measured on {device}",
                      file=sys.stderr)
                continue
            started = time.perf_counter()
            result = what_if(kernel, device=device, only=[fix], size=size,
                             tunables=tunables or {})
            predicted = result.gains()[fix]
            gain = float(before["time_median_s"] / after["time_median_s"])
            out.append({"fix": fix, "kernel": kernel, "config": before["config"], "size": size,
                        "fixed": f"{fixed} {after['config']}", "measured_gain": gain,
                        "predicted_gain": predicted,
                        "error_pct": 100 * abs(predicted / gain - 1),
                        "static_error_pct": 100 * abs(result.seconds / before["time_median_s"] - 1),
                        "seconds": time.perf_counter() - started})
            print(f"  {fix:15s} {kernel} {before['config']} {size}: measured {gain:.2f}x, "
                  f"predicted {predicted:.2f}x ({out[-1]['seconds']:.1f} s)", file=sys.stderr)
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="h100", help="dataset under data/ (h100, h200)")
    parser.add_argument("--sizes", default="large,medium", help="comma-separated sizes")
    args = parser.parse_args(argv)
    frame = score(args.device, args.sizes.split(","))
    if frame.empty:
        print("what-if pairs: 0 within 25%: 0 median error: -")
        return 1
    pd.set_option("display.width", 200)
    shown = frame.drop(columns=["seconds"]).round(2)
    print(shown.to_string(index=False))
    counted = frame[frame["measured_gain"] >= LEAST_GAIN]
    within = int((counted["error_pct"] <= 100 * TOLERANCE).sum())
    for fix, group in counted.groupby("fix"):
        print(f"{fix}: {len(group)} pairs, {int((group['error_pct'] <= 100 * TOLERANCE).sum())} "
              f"within 25%, median error {group['error_pct'].median():.1f}%")
    print(f"(left out, measured gain under {LEAST_GAIN}x: {len(frame) - len(counted)} pairs)")
    print(f"what-if pairs: {len(counted)} within 25%: {within} "
          f"median error: {np.median(counted['error_pct']):.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What does a loop trip cost a scheduler beyond its instructions?

A loop of ``CH`` independent FP32 chains (``FFMA``, one warp instruction a cycle on the
FP32 pair) runs ``UNROLL`` steps a trip, at full occupancy (8 blocks of 256 threads an
SM, 16 warps a scheduler), the same ``FFMA``s in all for every unroll: a trip is its
``FFMA``s plus the loop's counter, compare and branch. Printed as JSON, per unroll: the
time (CUDA events around 5 launches back to back, the median of 5 batches), the cycles
a trip takes per scheduler at the SM clock NVML reads after the run, and those cycles
less the trip's SASS instructions (``FFMA``s + 3).

    python tools/loop_trip_probe.py > loop_trip.json      (needs CuPy and a GPU)
    python tools/loop_trip_probe.py --warps 1,2,4,8,16 > loop_trip_warps.json

With ``--warps``, the same loops run at each of those warps per scheduler instead: blocks
of 128 threads (a warp on each scheduler), that many of them an SM; a row per count and
unroll. Fewer warps leave a trip's latency less hidden, so these rows are compared with
the static model's prediction of the same launches rather than with the instruction
count alone.
"""

from __future__ import annotations

import argparse
import json
import sys

import cupy as cp
import numpy as np
from _gpu_probe import BLOCK, PER_SM, SCHEDULERS, batched, full_occupancy, sm_clock_mhz

SOURCE = r"""
extern "C" __global__ void loop(float* out, int trips, float m, float c) {
  float a[CH];
#pragma unroll
  for (int j = 0; j < CH; j++) a[j] = threadIdx.x * 1e-6f + j;
#pragma unroll 1
  for (int t = 0; t < trips; t++) {
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
#pragma unroll
      for (int j = 0; j < CH; j++) a[j] = fmaf(a[j], m, c);
    }
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < CH; j++) s += a[j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"""
CHAINS = 4
FMAS = 1 << 19  # FFMAs a thread, every unroll


def _rows(sms: int, block: int, per_sm: int, out) -> list[dict]:
    grid = sms * per_sm
    rows = []
    for unroll in (1, 2, 4, 8, 16):
        kernel = cp.RawModule(code=SOURCE, options=(f"-DCH={CHAINS}", f"-DUNROLL={unroll}")
                              ).get_function("loop")
        trips = FMAS // (unroll * CHAINS)
        args = (out, np.int32(trips), np.float32(0.999999), np.float32(1e-7))
        seconds = batched(cp, kernel, grid, block, args)
        mhz = sm_clock_mhz()
        warp_trips = grid * block / 32 * trips / (sms * SCHEDULERS)
        per_trip = seconds * mhz * 1e6 / warp_trips
        body = unroll * CHAINS
        rows.append({"unroll": unroll, "ffma_per_trip": body, "trips": trips,
                     "block": block, "blocks_per_sm": per_sm,
                     "warps_per_scheduler": block // 32 * per_sm // SCHEDULERS,
                     "seconds": seconds, "sm_clock_mhz": mhz, "cycles_per_trip": per_trip,
                     "beyond_instructions": per_trip - (body + 3)})
        print(f"{block}x{per_sm} unroll {unroll}: {seconds * 1e3:.3f} ms, {per_trip:.2f} "
              f"cycles a trip ({per_trip - body - 3:+.2f} beyond its {body + 3} "
              "instructions)", file=sys.stderr)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warps", default="", help="warps per scheduler, comma-separated "
                    "(default: full occupancy, 8 blocks of 256 threads an SM)")
    args = ap.parse_args()
    props, sms, _, out = full_occupancy(cp, cp.float32)
    if args.warps:
        counts = [int(w) for w in args.warps.split(",")]
        out = cp.zeros(sms * max(counts) * 128, cp.float32)
        rows = [row for w in counts for row in _rows(sms, 128, w, out)]
    else:
        rows = _rows(sms, BLOCK, PER_SM, out)
    shape = {} if args.warps else {"block": BLOCK, "blocks_per_sm": PER_SM}
    json.dump({"device": props["name"].decode(), "sms": sms, "chains": CHAINS, **shape,
               "rows": rows}, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

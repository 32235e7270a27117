"""Do integer instructions issue in the shadow of an FP64 multiply-add?

An H100 or H200 SM sub-partition has 16 FP64 lanes: a warp's ``DFMA`` keeps its pipe
for two cycles. kerncast's pipeline model lets the scheduler issue another warp's
instruction to another pipe in the second cycle, so a loop of ``DFMA``s with a few
integer instructions beside them runs at two cycles a ``DFMA`` until the integer
instructions outnumber the ``DFMA``s. ``arith_fp64`` with one chain a thread measures
22% slower than with four, where the model predicts both at the pipe's rate.

Here a loop of ``CH`` independent ``DFMA`` chains, four steps each a trip, with ``INTS``
independent integer adds a trip beside them (and the loop's own counter, compare and
branch), runs at full occupancy (8 blocks of 256 threads an SM, 16 warps a scheduler).
Printed as JSON, per variant: the time (CUDA events around 5 launches back to back, the
median of 5 such batches) and the cycles a ``DFMA`` takes per scheduler at the SM clock
NVML reads after the run.

    python tools/fp64_issue_probe.py [--float] > fp64_issue.json   (needs CuPy and a GPU)

With ``--float`` the chains are FP32 (``FFMA``, one warp instruction a cycle on the
FP32 pair): the same loops, where the integer adds can only cost issue slots and the
integer ALU's own rate (two cycles a warp instruction).
"""

from __future__ import annotations

import json
import sys

import cupy as cp
import numpy as np
from _gpu_probe import BLOCK, PER_SM, SCHEDULERS, batched, full_occupancy, sm_clock_mhz

SOURCE = r"""
#define UNROLL 4
extern "C" __global__ void mix(double* out, int trips, REAL m, REAL c) {
  REAL a[CH];
#pragma unroll
  for (int j = 0; j < CH; j++) a[j] = threadIdx.x * 1e-9 + j;
  unsigned x[INTS > 0 ? INTS : 1];
#pragma unroll
  for (int k = 0; k < (INTS > 0 ? INTS : 1); k++) x[k] = threadIdx.x + k;
#pragma unroll 1
  for (int t = 0; t < trips; t++) {
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
#pragma unroll
      for (int j = 0; j < CH; j++) a[j] = fma(a[j], m, c);
    }
#pragma unroll
    for (int k = 0; k < INTS; k++) asm volatile("add.u32 %0, %0, %1;" : "+r"(x[k]) : "r"(t));
  }
  double s = 0;
#pragma unroll
  for (int j = 0; j < CH; j++) s += a[j];
#pragma unroll
  for (int k = 0; k < (INTS > 0 ? INTS : 1); k++) s += x[k];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"""
TRIPS = 20000
#: the chains' type: ``double`` (DFMA), or ``float`` with ``--float`` (FFMA, the control)
REAL = "float" if "--float" in sys.argv[1:] else "double"


def main() -> int:
    props, sms, grid, out = full_occupancy(cp, cp.float64)
    rows = []
    for ch in (1, 2, 4):
        for ints in (0, 1, 2, 4, 8):
            kernel = cp.RawModule(code=SOURCE, options=(f"-DCH={ch}", f"-DINTS={ints}",
                                                        f"-DREAL={REAL}")).get_function("mix")
            scalar = np.float64 if REAL == "double" else np.float32
            args = (out, np.int32(TRIPS), scalar(0.999999), scalar(1e-7))
            seconds = batched(cp, kernel, grid, BLOCK, args)
            mhz = sm_clock_mhz()
            dfma_per_scheduler = grid * BLOCK / 32 * TRIPS * 4 * ch / (sms * SCHEDULERS)
            cycles = seconds * mhz * 1e6 / dfma_per_scheduler
            regs = getattr(kernel, "num_regs", None)
            rows.append({"chains": ch, "ints_per_trip": ints, "dfma_per_trip": 4 * ch,
                         "seconds": seconds, "sm_clock_mhz": mhz,
                         "cycles_per_dfma": cycles, "regs": regs})
            print(f"chains {ch} ints {ints}: {seconds * 1e3:.3f} ms, {cycles:.3f} cycles a DFMA "
                  f"per scheduler at {mhz:.0f} MHz ({regs} registers)", file=sys.stderr)
    json.dump({"device": props["name"].decode(), "real": REAL, "sms": sms, "trips": TRIPS,
               "block": BLOCK,
               "blocks_per_sm": PER_SM, "rows": rows}, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

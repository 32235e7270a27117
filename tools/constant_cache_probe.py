"""Probe the constant cache on a GPU: cost of a constant load whose lanes read N addresses.

    python tools/constant_cache_probe.py --out data/probes/constant_cache_h100.json

Each kernel sums 16 unrolled constant loads a loop trip into four accumulators, its
lanes reading ``N`` distinct words of a ``__constant__`` table (lane & (N - 1) picks
the word's row, rows ``SPACING`` floats apart; corpus dct8x8 reads 8 rows of 8
floats), with 4 warps per block and 16 blocks per SM (16 warps per scheduler, all
resident). It reports warp-level constant loads per cycle per scheduler and the
cycles one of them holds the scheduler's constant path. The SASS of every kernel
(``cuobjdump -sass``) goes into the output beside its rates. Needs CuPy, nvcc,
cuobjdump and NVML; the GPU's clocks are read, never set.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _gpu_probe import SPIN, provenance, sass, timed

DISTINCT = (1, 2, 4, 8, 16, 32)
SPACINGS = (8, 32)
LOADS = 16  # per loop trip
TABLE_FLOATS = 32 * 32 + 64

SOURCE = r"""
__constant__ float table[32 * 32 + 64];

template<int N, int SPACING> __device__ void sum(float* out, int iters) {
  int row = (threadIdx.x & 31) & (N - 1);
  const int base = row * SPACING;
  float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
  for (int i = 0; i < iters; i++) {
    int k0 = i & 31;
#pragma unroll
    for (int k = 0; k < 16; k += 4) {
      a0 += table[base + ((k0 + k) & 31)];
      a1 += table[base + ((k0 + k + 1) & 31)];
      a2 += table[base + ((k0 + k + 2) & 31)];
      a3 += table[base + ((k0 + k + 3) & 31)];
    }
  }
  float s = a0 + a1 + a2 + a3;
  if (s == -1.0f) out[0] = s;
}
#define PROBE(n, spacing) extern "C" __global__ void ldc_##n##_##spacing(float* o, int it) { \
  sum<n, spacing>(o, it); }
PROBE(1, 8) PROBE(2, 8) PROBE(4, 8) PROBE(8, 8) PROBE(16, 8) PROBE(32, 8)
PROBE(1, 32) PROBE(2, 32) PROBE(4, 32) PROBE(8, 32) PROBE(16, 32) PROBE(32, 32)
"""
ITERS = 4096
WARPS_PER_SCHEDULER = 16

METHOD = ("tools/constant_cache_probe.py: event-timed launches after a spin "
          "kernel, 4 warps a block, 16 warps per scheduler, all resident")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import cupy as cp
    import pynvml

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    module = cp.RawModule(code=SOURCE + SPIN, options=("-std=c++17",))
    table = module.get_global("table")
    values = np.arange(TABLE_FLOATS, dtype=np.float32) * np.float32(1e-3)
    table.copy_from_host(values.ctypes.data, values.nbytes)
    spin = module.get_function("spin")
    sink = cp.zeros(1, cp.float32)
    rows = []
    for spacing in SPACINGS:
        for n in DISTINCT:
            kernel = module.get_function(f"ldc_{n}_{spacing}")
            seconds = timed(cp, spin, kernel, (sms * WARPS_PER_SCHEDULER,), (128,),
                            (sink, np.int32(ITERS)))
            clock = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
            rate = WARPS_PER_SCHEDULER * ITERS * LOADS / (seconds * clock * 1e6)
            rows.append({"distinct": n, "spacing_floats": spacing, "seconds": seconds,
                         "sm_clock_mhz": clock,
                         "loads_per_clk_scheduler": round(rate, 4),
                         "cycles_per_load": round(1 / rate, 3)})
            print(f"N={n:2d} spacing={spacing:2d}: {1 / rate:6.2f} cycles a warp load",
                  flush=True)
    out = {**provenance(props, pynvml, METHOD),
           "rows": rows, "sass": sass(SOURCE + SPIN)}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()

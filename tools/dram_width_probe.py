"""Loaded DRAM latency by load width: whether a warp's wait grows with its load
instructions in flight or with its lines in flight (on an NVIDIA GPU, CuPy).

    python tools/dram_width_probe.py [--device h200]
        [--out data/probes/dram-inflight-width-h200.json]

The calibration's ``dram_inflight_N`` keeps N 4-byte loads (one line a warp each) in
flight per warp. This runs the same stream with ``float``, ``float2`` and ``float4``
loads (one, two and four lines a warp each), 1 to 8 of them in flight per warp, over 2, 8
and 32 warps per SM in one wave, and prints per launch the lines in flight per warp, the
bandwidth and the latency by Little's law (bytes in flight over bandwidth), timed and
clocked as the calibration times its probes. Nothing is tuned on it: it says which of
the two the pipeline should charge. ``--out`` keeps the rows with the device's name and the time of the run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from _gpu_probe import calibration_bench, write_rows

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SOURCE = r"""
__device__ float total(float v) { return v; }
__device__ float total(float2 v) { return v.x + v.y; }
__device__ float total(float4 v) { return v.x + v.y + v.z + v.w; }
template <typename T, int LOADS>
__global__ void inflight(const T* __restrict__ src, long long trips, float* sink) {
  long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
#pragma unroll 1
  for (long long t = 0; t < trips; t++) {
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < LOADS; k++) s += total(src[i + k * stride]);
    acc += s;
    i += LOADS * stride;
  }
  if (acc == 12345.0f) sink[0] = acc;
}
"""
TYPES = (("float", 4), ("float2", 8), ("float4", 16))
LOADS, WARPS, BYTES, THREADS = (1, 2, 4, 8), (2, 8, 32), 1 << 30, 64


def main(argv: list[str] | None = None) -> int:
    bench, out = calibration_bench(__doc__, argv)
    if bench is None:
        return 1
    cp = bench.cp
    names = [f"inflight<{t},{n}>" for t, _ in TYPES for n in LOADS]
    module = cp.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=names)
    sms, clock = bench.sms, bench.clock_hz
    src = cp.ones(BYTES // 4, dtype=cp.float32)
    sink = cp.zeros(1, dtype=cp.float32)
    rows = []
    print("type   loads warps lines/warp    GB/s  latency")
    for name, width in TYPES:
        for loads in LOADS:
            fn = module.get_function(f"inflight<{name},{loads}>")
            for warps in WARPS:
                blocks = sms * warps * 32 // THREADS
                threads = blocks * THREADS
                trips = BYTES // width // (threads * loads)
                seconds = bench.timed(lambda: fn((blocks,), (THREADS,),
                                                 (src, np.int64(trips), sink)), reps=3)
                moved = trips * threads * loads * width
                lines = loads * width * 32 // 128
                latency = warps * lines * 128 * sms * clock * seconds / moved
                rows.append({"type": name, "loads": loads, "warps_per_sm": warps,
                             "lines_per_warp": lines, "gbs": round(moved / seconds / 1e9, 1),
                             "latency_cycles": round(latency, 1)})
                print(f"{name:6s} {loads:5d} {warps:5d} {lines:10d} {rows[-1]['gbs']:7.0f} "
                      f"{latency:8.0f}", flush=True)
    write_rows(out, bench, "python tools/dram_width_probe.py", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

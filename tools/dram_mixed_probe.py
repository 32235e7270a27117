"""Loaded DRAM latency with writes mixed in: how much longer a warp waits for its reads
when every line it reads is also written back (on an NVIDIA GPU, CuPy).

    python tools/dram_mixed_probe.py [--device h200]
        [--out data/probes/dram-mixed-h200.json]

The calibration's loaded-latency probe (``dram_inflight_N``) streams reads alone: N
4-byte loads in flight per warp (one line a warp each), over 2 to 64 warps per SM in one
wave. This runs that stream over 8 to 64 warps per SM (the loads at which the two can
differ) and the same stream with each loaded word stored to a second buffer at the same
index (a copy: as many bytes written as read), and prints per launch
the reads in flight per SM, the read and the total bandwidth, and the reads' latency by
Little's law (read bytes in flight over the read bandwidth), timed and clocked as the
calibration times its probes. Nothing is tuned on it: it says whether the static
model's DRAM server, which adds the read-only curve's growth at its busy share, should
charge writes differently. ``--out`` keeps the rows with the device's name and the time
of the run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from _gpu_probe import calibration_bench, stream_wave, write_rows

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SOURCE = r"""
template <int LOADS, bool COPY>
__global__ void stream(const float* __restrict__ src, float* __restrict__ dst,
                       long long trips, float* sink) {
  long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
#pragma unroll 1
  for (long long t = 0; t < trips; t++) {
    float v[LOADS];
#pragma unroll
    for (int k = 0; k < LOADS; k++) v[k] = src[i + k * stride];
    if (COPY) {
#pragma unroll
      for (int k = 0; k < LOADS; k++) dst[i + k * stride] = v[k];
    } else {
#pragma unroll
      for (int k = 0; k < LOADS; k++) acc += v[k];
    }
    i += LOADS * stride;
  }
  if (acc == 12345.0f) sink[0] = acc;
}
"""
LOADS, WARPS, BYTES, THREADS = (1, 2, 4, 8), (8, 16, 32, 64), 1 << 30, 64
KINDS = (("read", "false"), ("copy", "true"))


def main(argv: list[str] | None = None) -> int:
    bench, out = calibration_bench(__doc__, argv)
    if bench is None:
        return 1
    cp = bench.cp
    names = [f"stream<{n},{flag}>" for n in LOADS for _, flag in KINDS]
    module = cp.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=names)
    sms, clock = bench.sms, bench.clock_hz
    src = cp.ones(BYTES // 4, dtype=cp.float32)
    dst = cp.zeros(BYTES // 4, dtype=cp.float32)
    sink = cp.zeros(1, dtype=cp.float32)
    rows = []
    print("kind loads warps KiB/SM  read GB/s  total GB/s  latency")
    for loads in LOADS:
        for warps in WARPS:
            blocks, threads, trips = stream_wave(sms, warps, THREADS, loads, BYTES)
            for kind, flag in KINDS:
                fn = module.get_function(f"stream<{loads},{flag}>")
                seconds = bench.timed(lambda f=fn: f((blocks,), (THREADS,),
                                                     (src, dst, np.int64(trips), sink)), reps=3)
                read = trips * threads * loads * 4
                total = read * (2 if kind == "copy" else 1)
                inflight = warps * loads * 128
                latency = inflight * sms * clock * seconds / read
                rows.append({"kind": kind, "loads": loads, "warps_per_sm": warps,
                             "read_inflight_per_sm": inflight,
                             "read_gbs": round(read / seconds / 1e9, 1),
                             "total_gbs": round(total / seconds / 1e9, 1),
                             "latency_cycles": round(latency, 1)})
                r = rows[-1]
                print(f"{kind:4s} {loads:5d} {warps:5d} {inflight / 1024:6.1f} "
                      f"{r['read_gbs']:10.0f} {r['total_gbs']:11.0f} {latency:8.0f}",
                      flush=True)
    write_rows(out, bench, "python tools/dram_mixed_probe.py", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

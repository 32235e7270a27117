"""How DRAM read latencies spread under load: the distribution of single requests'
latencies, not only their mean (on an NVIDIA GPU, CuPy).

    python tools/dram_spread_probe.py [--device h200]
        [--out data/probes/dram-spread-h200.json]

Every warp streams through 1 GiB in one wave, keeping N 128-byte lines in flight (one
4-byte load a lane each, N of them back to back) over W warps an SM, as the
calibration's loaded-latency probe does. Each time, lane 0 reads the SM clock before
the N loads and again once the first load's value has been used: the first request's
latency, while the other N - 1 and every other warp's requests load the DRAM. Per
(N, W) it prints the bandwidth reached and its share of the calibrated read ceiling,
and the latencies' mean, standard deviation, minimum and percentiles, and the spread of
the latest of W requests issued together past the earliest (the last warp of a block
of W warps against its first).

Nothing is tuned on it: it says whether the static model's DRAM latency, one figure at
each load, should spread as the GPU's does (a block waits for its last warp).
``--out`` keeps the rows with the device's name and the time of the run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from _gpu_probe import calibration_bench, stream_wave, write_rows

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SOURCE = r"""
template <int LOADS>
__global__ void spread(const float* __restrict__ src, long long trips, int samples,
                       int* __restrict__ lat, float* sink) {
  long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long warp = i >> 5;
  float acc = 0.0f;
#pragma unroll 1
  for (long long t = 0; t < trips; t++) {
    long long t0, t1;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0) :: "memory");
    float v[LOADS];
#pragma unroll
    for (int k = 0; k < LOADS; k++) v[k] = src[i + k * stride];
    asm volatile("add.f32 %0, %0, %1;" : "+f"(acc) : "f"(v[0]));
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1) :: "memory");
#pragma unroll
    for (int k = 1; k < LOADS; k++) acc += v[k];
    if ((threadIdx.x & 31) == 0 && t < samples) lat[warp * samples + t] = (int)(t1 - t0);
    i += LOADS * stride;
  }
  if (acc == 12345.0f) sink[0] = acc;
}
"""
LOADS, WARPS, BYTES, THREADS, SAMPLES = (1, 2, 4, 8), (8, 16, 32, 64), 1 << 30, 64, 48


def _spread_of_max(lat: np.ndarray, group: int) -> float:
    """Mean of (latest - earliest) over groups of ``group`` warps' requests issued in the
    same trip (warps next to each other, as a block's are)."""
    warps, samples = lat.shape
    usable = warps // group * group
    grouped = lat[:usable].reshape(-1, group, samples)
    return float(np.mean(grouped.max(axis=1) - grouped.min(axis=1)))


def main(argv: list[str] | None = None) -> int:
    bench, out = calibration_bench(__doc__, argv)
    if bench is None:
        return 1
    cp = bench.cp
    names = [f"spread<{n}>" for n in LOADS]
    module = cp.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=names)
    sms = bench.sms
    src = cp.ones(BYTES // 4, dtype=cp.float32)
    sink = cp.zeros(1, dtype=cp.float32)
    rows = []
    print("loads warps  GB/s   mean    std    min    p10    p50    p90    p99  max-min(8) (32)")
    for loads in LOADS:
        for warps in WARPS:
            blocks, threads, trips = stream_wave(sms, warps, THREADS, loads, BYTES)
            lat = cp.zeros((threads // 32) * SAMPLES, dtype=cp.int32)
            fn = module.get_function(f"spread<{loads}>")
            seconds = bench.timed(lambda f=fn: f((blocks,), (THREADS,), (
                src, np.int64(trips), np.int32(SAMPLES), lat, sink)), reps=3)
            # the first trips see the wave's start: the samples past them are steady
            sample = cp.asnumpy(lat).reshape(threads // 32, SAMPLES)[:, 8:].astype(float)
            flat = sample.reshape(-1)
            gbs = trips * threads * loads * 4 / seconds / 1e9
            q = np.percentile(flat, [0, 10, 50, 90, 99])
            rows.append({"loads": loads, "warps_per_sm": warps,
                         "inflight_per_sm": warps * loads * 128, "read_gbs": round(gbs, 1),
                         "mean": round(float(flat.mean()), 1), "std": round(float(flat.std()), 1),
                         "min": q[0], "p10": q[1], "p50": q[2], "p90": q[3], "p99": q[4],
                         "spread_8": round(_spread_of_max(sample, 8), 1),
                         "spread_32": round(_spread_of_max(sample, 32), 1),
                         "histogram": np.histogram(flat, bins=40)[0].tolist(),
                         "edges": [round(float(e), 1) for e in np.histogram(flat, bins=40)[1]]})
            r = rows[-1]
            print(f"{loads:5d} {warps:5d} {gbs:5.0f} {r['mean']:6.0f} {r['std']:6.0f} "
                  f"{q[0]:6.0f} {q[1]:6.0f} {q[2]:6.0f} {q[3]:6.0f} {q[4]:6.0f} "
                  f"{r['spread_8']:8.0f} {r['spread_32']:6.0f}", flush=True)
    write_rows(out, bench, "python tools/dram_spread_probe.py", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

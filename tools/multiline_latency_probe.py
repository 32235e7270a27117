"""How long a warp's load of several DRAM lines waits: the latest of its lines, drawn
apart or together (on an NVIDIA GPU, CuPy).

    python tools/multiline_latency_probe.py [--device h200]
        [--out data/probes/multiline-latency-h200.json]

Every warp of one wave reads, trip after trip, lines no one has read before (each launch
of a configuration past the lines of the one before, so that none is in the L2): one
4-byte load a lane, its 32 lanes spread over L lines (32 / L lanes a line), one request
in flight a warp, W warps an SM. Lane 0 reads the SM clock before the load and again
once its value has been used: a warp's load completes when its last line has arrived,
so this is the latency of the request's latest line. The lines of one request are next
to each other (``adjacent``) or a plane apart (``apart``: each line of a request in a
plane of its own, about 170 MB on 132 SMs). Per (layout, L, W) it prints the bandwidth
reached, the latencies' mean and spread, and what the latest of L lines would average
were each line a draw of its own from the one-line latencies at the same lines in
flight an SM (resampled from the L = 1 row with W * L warps, where there is one).

Nothing is tuned on it: it says whether the static model's DRAM server should let a
request of several lines wait for the latest of independent draws.
``--out`` keeps the rows with the device's name and the time of the run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from _gpu_probe import calibration_bench, write_rows

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SOURCE = r"""
template <int LINES, bool APART>
__global__ void lines(const float* __restrict__ src, long long first, int trips,
                      long long plane, int samples, int* __restrict__ lat, float* sink) {
  long long warps = (long long)gridDim.x * blockDim.x / 32;
  long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  int lane = threadIdx.x & 31, group = lane % LINES, word = lane / LINES;
  float acc = 0.0f;
#pragma unroll 1
  for (int t = 0; t < trips; t++) {
    long long slot = first + (long long)t * warps + warp;  // a fresh place every trip
    long long line = APART ? group * plane + slot : slot * LINES + group;
    long long t0, t1;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0) :: "memory");
    float v = src[line * 32 + word];
    asm volatile("add.f32 %0, %0, %1;" : "+f"(acc) : "f"(v));
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1) :: "memory");
    if (lane == 0 && t < samples) lat[warp * samples + t] = (int)(t1 - t0);
  }
  if (acc == 12345.0f) sink[0] = acc;
}
"""
LINES, WARPS, THREADS, TRIPS, SAMPLES = (1, 2, 4, 8, 32), (2, 4, 8, 16, 32, 64), 64, 40, 40
RUNS = 4  # launches of a configuration: a warm-up and three timed
SKIP = 8  # the first trips see the wave's start


def _independent_max(one: np.ndarray, lines: int, rng: np.random.Generator) -> float:
    """Mean of the latest of ``lines`` draws from the one-line latencies ``one``."""
    return float(rng.choice(one, size=(200_000, lines)).max(axis=1).mean())


def main(argv: list[str] | None = None) -> int:
    bench, out = calibration_bench(__doc__, argv)
    if bench is None:
        return 1
    cp = bench.cp
    names = [f"lines<{n}, {'true' if apart else 'false'}>"
             for apart in (False, True) for n in LINES]
    module = cp.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=names)
    sms = bench.sms
    plane_lines = RUNS * max(WARPS) * sms * TRIPS  # every run's slots
    most = max(LINES) * plane_lines * 32
    src = cp.ones(most, dtype=cp.float32)
    sink = cp.zeros(1, dtype=cp.float32)
    rng = np.random.default_rng(0)
    rows, one_line = [], {}
    print("layout   L  W    GB/s   mean    std    p10    p50    p90  independent max")
    for apart in (False, True):
        for lines in LINES:
            for warps in WARPS:
                blocks = sms * warps * 32 // THREADS
                total_warps = blocks * THREADS // 32
                lat = cp.zeros(total_warps * SAMPLES, dtype=cp.int32)
                fn = module.get_function(f"lines<{lines}, {'true' if apart else 'false'}>")
                runs = iter(range(RUNS))

                def launch(f=fn, per_run=total_warps * TRIPS, runs=runs):
                    first = next(runs) * per_run
                    f((blocks,), (THREADS,), (src, np.int64(first), np.int32(TRIPS),
                                              np.int64(plane_lines), np.int32(SAMPLES), lat,
                                              sink))
                seconds = bench.timed(launch, reps=RUNS - 1)
                sample = cp.asnumpy(lat).reshape(total_warps, SAMPLES)[:, SKIP:]
                flat = sample.reshape(-1).astype(float)
                if lines == 1:
                    one_line[(apart, warps)] = flat
                same_load = one_line.get((apart, warps * lines))
                independent = None if same_load is None else round(
                    _independent_max(same_load, lines, rng), 1)
                gbs = TRIPS * total_warps * lines * 128 / seconds / 1e9
                q = np.percentile(flat, [10, 50, 90])
                rows.append({"layout": "apart" if apart else "adjacent", "lines": lines,
                             "warps_per_sm": warps, "lines_in_flight_per_sm": warps * lines,
                             "read_gbs": round(gbs, 1), "mean": round(float(flat.mean()), 1),
                             "std": round(float(flat.std()), 1), "p10": q[0], "p50": q[1],
                             "p90": q[2], "independent_max_mean": independent})
                shown = "-" if independent is None else f"{independent:.0f}"
                print(f"{rows[-1]['layout']:8s} {lines:2d} {warps:2d} {gbs:7.0f} "
                      f"{flat.mean():6.0f} {flat.std():6.0f} {q[0]:6.0f} {q[1]:6.0f} "
                      f"{q[2]:6.0f}  {shown}", flush=True)
    write_rows(out, bench, "python tools/multiline_latency_probe.py", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How much of a launch's data the L2 still holds from the launches before it, when
repeated launches cycle through copies of their buffers (on an NVIDIA GPU, CuPy).

    python tools/l2_carryover_probe.py [--device h200]
        [--out data/probes/l2-carryover-h200.json]

The ground truth's protocol (``kerncast.measure``'s ``times``) repeats a launch back to
back over C copies of its buffers (``kerncast.core.cycled_copies``), so that each
launch finds its data evicted from the L2; the static model takes the buffers as in the
L2 where every copy fits in its usable share, and as in DRAM otherwise. For buffers of S
MB and C copies this times, per launch (the median over 4 C launches, one copy after the
other, each timed behind the calibration's 50 µs spin), a kernel that reads every float
of its copy (``read``) and one that updates
every float in place (``update``: read, write, the line written back once evicted), and
prints the bandwidth each reached against the spec's peak DRAM bandwidth: a launch faster
than DRAM allows finds part of its data in the L2.

Nothing is tuned on it: it says whether the model's all-or-nothing L2 between launches
should keep part of a cyclic pass.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from _gpu_probe import calibration_bench, write_rows

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SOURCE = r"""
extern "C" __global__ void read(const float4* __restrict__ x, long long n, float* sink) {
  float acc = 0.0f;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    float4 v = x[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 12345.0f) sink[0] = acc;
}

extern "C" __global__ void update(float4* __restrict__ x, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    float4 v = x[i];
    v.x = v.x * 0.5f + 1.0f; v.y = v.y * 0.5f + 1.0f;
    v.z = v.z * 0.5f + 1.0f; v.w = v.w * 0.5f + 1.0f;
    x[i] = v;
  }
}
"""
SIZES_MB, COPIES, THREADS = (8, 16, 24, 32, 48, 64, 128), (1, 2, 3, 4, 8), 256


def main(argv: list[str] | None = None) -> int:
    bench, out = calibration_bench(__doc__, argv)
    if bench is None:
        return 1
    cp = bench.cp
    module = cp.RawModule(code=SOURCE)
    read_fn, update_fn = module.get_function("read"), module.get_function("update")
    blocks = bench.sms * 8
    sink = cp.zeros(1, dtype=cp.float32)
    ceiling = bench.device.memory.peak_bandwidth_gbs
    rows = []
    print("kind      MB  copies  footprint/L2   us   GB/s  share of peak")
    l2_mb = bench.l2_bytes / (1 << 20)
    for mb in SIZES_MB:
        n4 = mb * (1 << 20) // 16
        for copies in COPIES:
            bufs = [cp.ones(n4 * 4, dtype=cp.float32) for _ in range(copies)]
            for kind in ("read", "update"):
                turn = iter(range(1 << 30))

                def launch(kind=kind, bufs=bufs, turn=turn) -> None:
                    x = bufs[next(turn) % len(bufs)]
                    if kind == "read":
                        read_fn((blocks,), (THREADS,), (x, np.int64(n4), sink))
                    else:
                        update_fn((blocks,), (THREADS,), (x, np.int64(n4)))
                with bench.stream:
                    for _ in range(2 * copies):  # the cycle's steady state
                        launch()
                seconds = bench.timed(launch, reps=4 * copies)
                moved = mb * (1 << 20) * (1 if kind == "read" else 2)
                gbs = moved / seconds / 1e9
                rows.append({"kind": kind, "mb": mb, "copies": copies,
                             "footprint_over_l2": round(mb * copies / l2_mb, 2),
                             "us": round(seconds * 1e6, 2), "gbs": round(gbs, 1),
                             "share_of_peak": round(gbs / ceiling, 3)})
                print(f"{kind:7s} {mb:4d} {copies:6d} {mb * copies / l2_mb:12.2f} "
                      f"{seconds * 1e6:6.1f} {gbs:6.0f} {gbs / ceiling:8.2f}", flush=True)
            del bufs
            cp.get_default_memory_pool().free_all_blocks()
    write_rows(out, bench, "python tools/l2_carryover_probe.py", rows,
               dram_peak_gbs=ceiling)
    return 0


if __name__ == "__main__":
    sys.exit(main())

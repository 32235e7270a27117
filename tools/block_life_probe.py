"""Block lives of a streaming kernel by block size: when each warp starts and ends, on
which SM, and how long a slot stays empty between blocks (on an NVIDIA GPU, CuPy).

    python tools/block_life_probe.py [--device h200]
        [--out data/probes/block-life-h200.json]

A kernel of one float a thread over 1 GiB (``copy``: read and write it back elsewhere;
``read``: read it, write only a flag no thread sets; ``spin``: no memory, a fixed number
of cycles) runs with 128, 256, 512 and 1,024 threads a block, at full occupancy. Lane 0
of every warp records the SM clock when the warp starts and after its last instruction
that matters (its store issued, its load's value used), and the SM it ran on. Per block
size it prints the launch's time (timed without the records as well), and over the
blocks of every SM:

- ``stagger``: cycles from the first warp of a block to start to the last;
- ``spread``: cycles from the first warp of a block to end to the last;
- ``life``: cycles from the first start to the last end of a block;
- ``warp``: cycles a warp lives (mean);
- ``gap``: cycles from a block's last end to the next start in the slot it frees (the
  n-th start past the first wave on an SM paired with the n-th end there);
- ``per block``: the launch's time over its blocks per SM: what one slot's block costs.

Nothing is tuned on it: it says which part of a block's life grows with its warps when
the kernel streams through DRAM (the static model times a slot's turnaround with the
calibration's spinning blocks). ``--out`` keeps the rows with the device's name and the
time of the run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from _gpu_probe import calibration_bench, write_rows

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SOURCE = r"""
__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

template <int MODE, bool RECORD>
__global__ void life(const float* __restrict__ src, float* __restrict__ dst,
                     long long* __restrict__ rec, long long spin) {
  long long start = clock64();
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (MODE == 0) {          // copy
    dst[i] = src[i];
  } else if (MODE == 1) {   // read
    float v = src[i];
    if (v == 12345.0f) dst[0] = v;
  } else {                  // spin
    while (clock64() - start < spin) { }
  }
  long long end = clock64();
  if (RECORD && (threadIdx.x & 31) == 0) {
    long long w = i >> 5;
    rec[3 * w] = start;
    rec[3 * w + 1] = end;
    rec[3 * w + 2] = sm_id();
  }
}
"""
MODES = (("copy", 0), ("read", 1), ("spin", 2))
BLOCKS = (128, 256, 512, 1024)
BYTES = 1 << 30
SPIN_CYCLES = 2000


def _per_sm(rec: np.ndarray, warps_per_block: int, slots: int) -> dict:
    """The block statistics of one launch's records (start, end, SM per warp)."""
    start, end, sm = rec[:, 0], rec[:, 1], rec[:, 2]
    blocks = start.size // warps_per_block
    shape = (blocks, warps_per_block)
    b_start = start.reshape(shape)
    b_end = end.reshape(shape)
    b_sm = sm.reshape(shape)[:, 0]
    first, last = b_start.min(1), b_end.max(1)
    gaps = []
    for s in np.unique(b_sm):
        on = b_sm == s
        starts, ends = np.sort(first[on]), np.sort(last[on])
        if starts.size > slots:
            gaps.append(starts[slots:] - ends[:starts.size - slots])
    gap = np.concatenate(gaps) if gaps else np.zeros(1)
    return {"stagger": float(np.mean(b_start.max(1) - first)),
            "spread": float(np.mean(last - b_end.min(1))),
            "life": float(np.mean(last - first)),
            "warp": float(np.mean(end - start)),
            "gap": float(np.median(gap)), "gap_mean": float(np.mean(gap)),
            "blocks": int(blocks)}


def main(argv: list[str] | None = None) -> int:
    bench, out = calibration_bench(__doc__, argv)
    if bench is None:
        return 1
    cp = bench.cp
    names = [f"life<{m},{r}>" for _, m in MODES for r in ("true", "false")]
    module = cp.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=names)
    sms, clock = bench.sms, bench.clock_hz
    n = BYTES // 4
    src = cp.ones(n, dtype=cp.float32)
    dst = cp.zeros(n, dtype=cp.float32)
    rec = cp.zeros((n // 32, 3), dtype=cp.int64)
    rows = []
    print("mode  threads  ms(rec)  ms  per-block  stagger  spread  life  warp  gap")
    for mode, m in MODES:
        for threads in BLOCKS:
            grid = n // threads
            if mode == "spin":
                grid = sms * (2048 // threads) * 16  # 16 waves of spinning blocks
            slots = 2048 // threads
            args = (src, dst, rec, np.int64(SPIN_CYCLES))
            plain = module.get_function(f"life<{m},false>")
            recorded = module.get_function(f"life<{m},true>")
            seconds = bench.timed(lambda f=plain: f((grid,), (threads,), args), reps=5)
            with_rec = bench.timed(lambda f=recorded: f((grid,), (threads,), args), reps=3)
            records = cp.asnumpy(rec[:grid * threads // 32])
            stats = _per_sm(records, threads // 32, slots)
            per_block = seconds * clock * sms * slots / grid
            rows.append({"mode": mode, "threads": threads, "grid": grid, "slots": slots,
                         "seconds": seconds, "seconds_recorded": with_rec,
                         "per_block_cycles": round(per_block, 1),
                         **{k: round(v, 1) if isinstance(v, float) else v
                            for k, v in stats.items()}})
            r = rows[-1]
            print(f"{mode:5s} {threads:7d} {with_rec * 1e3:8.3f} {seconds * 1e3:6.3f} "
                  f"{per_block:9.0f} {r['stagger']:8.0f} {r['spread']:7.0f} {r['life']:5.0f} "
                  f"{r['warp']:5.0f} {r['gap']:5.0f}", flush=True)
    write_rows(out, bench, "python tools/block_life_probe.py", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How late does the block scheduler start the last block of a launch's first wave?

kerncast's calibration times empty kernels of 256-thread blocks over grids of 1 to 800
waves; the slope is the block scheduler's cost per block (``per_block_s``). Within the
first wave, blocks that start later end later: the static model adds
``min(blocks, wave) * per_block_s`` to a launch. Whether that cost is per block or per
warp decides how it depends on the block size.

Here every block spins for a fixed number of cycles (so a block's own time does not
depend on when it starts or on its size), and launches of 1 to one full wave of blocks
of 32 to 1024 threads are timed (CUDA events around ``BATCH`` launches back to back,
the median of ``REPS`` batches, after half a second of launches so that the clocks
have risen; clocks as they are). Each block also writes the global timer as it starts:
the spread of the starts over one launch is the scheduler's stagger itself. Printed as
JSON: per block size, the blocks per SM, the wave, and each grid's time and start
spread; and per block size the slope of time over blocks within the wave.

    python tools/first_wave_probe.py > first_wave.json      (needs CuPy and a GPU)
"""

from __future__ import annotations

import json
import sys

import cupy as cp
import numpy as np
from _gpu_probe import warm_up

SOURCE = r"""
extern "C" __global__ void spin(long long cycles, unsigned long long* starts) {
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  long long start = clock64();
  if (threadIdx.x == 0) starts[blockIdx.x] = now;
  while (clock64() - start < cycles) {}
}
"""
REPS = 15
BATCH = 20
THREADS_PER_SM = 2048
MAX_BLOCKS_PER_SM = 32


def _timed(kernel, grid: int, block: int, cycles: int, out) -> tuple[float, float]:
    """(seconds per launch over ``BATCH`` launches back to back, the median over
    ``REPS`` batches; the median spread of the blocks' start times (globaltimer, ns)
    over single launches)."""
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    args = (np.int64(cycles), out)
    per, spreads = [], []
    for _ in range(REPS):
        start.record()
        for _ in range(BATCH):
            kernel((grid,), (block,), args)
        stop.record()
        stop.synchronize()
        per.append(cp.cuda.get_elapsed_time(start, stop) * 1e-3 / BATCH)
        out[:grid] = 0
        kernel((grid,), (block,), args)
        starts = out[:grid].get()
        spreads.append(float(starts.max() - starts.min()))
    return float(np.median(per)), float(np.median(spreads))


def main() -> int:
    kernel = cp.RawModule(code=SOURCE).get_function("spin")
    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    out = cp.zeros(MAX_BLOCKS_PER_SM * sms, cp.uint64)
    result = {"device": props["name"].decode(), "sms": sms, "reps": REPS, "batch": BATCH,
              "sizes": []}
    warm_up(cp, lambda: kernel((1024,), (256,), (np.int64(20000), out)))
    for cycles in (0, 20000):
        for block in (32, 64, 128, 256, 512, 1024):
            per_sm = min(MAX_BLOCKS_PER_SM, THREADS_PER_SM // block)
            wave = per_sm * sms
            grids = sorted({1, sms, wave // 4, wave // 2, 3 * wave // 4, wave})
            timed = [_timed(kernel, g, block, cycles, out) for g in grids]
            times, spreads = [t for t, _ in timed], [s for _, s in timed]
            slope = float(np.polyfit(grids, times, 1)[0])
            result["sizes"].append({"spin_cycles": cycles, "block": block, "blocks_per_sm": per_sm,
                                    "wave": wave, "grids": grids, "seconds": times,
                                    "start_spread_ns": spreads,
                                    "slope_s_per_block": slope,
                                    "slope_s_per_warp": slope / max(1, block // 32)})
            print(f"spin {cycles} block {block}: wave {wave}, "
                  f"{times[0] * 1e6:.2f} -> {times[-1] * 1e6:.2f} us, "
                  f"{slope * 1e9:.3f} ns/block, start spread {spreads[-1]:.0f} ns over the wave",
                  file=sys.stderr)
    json.dump(result, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

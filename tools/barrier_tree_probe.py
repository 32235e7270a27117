"""What does a barrier cost with work between barriers, alone on the SM and beside other
blocks?

Barrier-bound kernels with large blocks (``reduce_tree``, ``scan_block``,
``bitonic_block``) are predicted up to 1.4x slow at size large on the H200, more so the
larger their blocks, and a wave of ``scan_block``'s blocks more than one block alone
(``tools/scan_waves_probe.py``). Two loops isolate the parts:

- ``exchange``: every warp reads a neighbour's shared word, writes its own and meets the
  block at a barrier, ``REPS`` times: a barrier with one shared round trip between;
- ``tree``: the shared-memory tree of ``reduce_tree`` (each level the lower half of the
  active threads adds the upper half, then a barrier; the last levels within warp 0),
  ``REPS`` times.

Each runs with blocks of 4, 8, 16 and 32 warps, one block per SM, a few and as many as fit,
on a grid of exactly one wave, so that the time over ``REPS`` is the steady time of one
iteration of the resident blocks side by side.

On a GPU (CuPy; CUDA events around ``BATCH`` launches back to back, the median of
``BATCHES`` batches, after half a second of launches so that the clocks have risen;
clocks as they are, read with nvidia-smi before and after)::

    python tools/barrier_tree_probe.py > barrier_tree.json

On any machine, the static model's predictions of the same launches beside them, as
cycles of one iteration at the clock the GPU ran at::

    python tools/barrier_tree_probe.py --compare data/probes/barrier_tree_h200.json
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

SOURCE = r"""
#ifndef BLOCK
#define BLOCK 256
#endif

extern "C" __global__ void exchange(float* __restrict__ out, int reps) {
  __shared__ float s[BLOCK];
  int tid = threadIdx.x;
  s[tid] = tid;
  __syncthreads();
  float v = 0.0f;
#pragma unroll 1
  for (int r = 0; r < reps; r++) {
    v = s[(tid + 32) % BLOCK];
    __syncthreads();
    s[tid] = v + 1.0f;
    __syncthreads();
  }
  out[blockIdx.x * BLOCK + tid] = v;
}

extern "C" __global__ void tree(float* __restrict__ out, int reps) {
  __shared__ float s[BLOCK];
  int tid = threadIdx.x;
  float v = tid;
#pragma unroll 1
  for (int r = 0; r < reps; r++) {
    s[tid] = v;
    __syncthreads();
#pragma unroll
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
      if (tid < stride) s[tid] += s[tid + stride];
      __syncthreads();
    }
    v += s[0];
  }
  out[blockIdx.x * BLOCK + tid] = v;
}
"""
KERNELS = ("exchange", "tree")
BLOCKS = (128, 256, 512, 1024)
REPS = 2000
BATCH, BATCHES = 5, 9


def _per_sm_levels(most: int) -> list[int]:
    """Blocks per SM to run: one, two, a middle level and as many as fit."""
    return sorted({1, min(2, most), max(1, most // 2), most})


def _measure() -> dict:
    """Every kernel, block size and blocks per SM, timed on this machine's GPU."""
    import cupy as cp
    from _gpu_probe import batched, sm_clock_mhz, warm_up

    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    result: dict = {"device": props["name"].decode(), "sms": sms, "reps": REPS,
                    "batch": BATCH, "batches": BATCHES,
                    "measured_at": datetime.now(timezone.utc).isoformat(),
                    "cupy": cp.__version__, "sm_clock_mhz_before": sm_clock_mhz(),
                    "rows": []}
    for block in BLOCKS:
        module = cp.RawModule(code=SOURCE, options=(f"-DBLOCK={block}",))
        for name in KERNELS:
            kernel = module.get_function(name)
            most = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                kernel.kernel.ptr, block, 0)
            for per_sm in _per_sm_levels(most):
                grid = per_sm * sms
                out = cp.zeros(grid * block, dtype=cp.float32)
                args = (out, np.int32(REPS))
                warm_up(cp, lambda: kernel((grid,), (block,), args))
                seconds = batched(cp, kernel, grid, block, args, launches=BATCH,
                                  batches=BATCHES)
                row = {"kernel": name, "block": block, "blocks_per_sm": per_sm,
                       "most_per_sm": most, "grid": grid, "seconds": seconds}
                result["rows"].append(row)
                print(row, file=sys.stderr)
    result["sm_clock_mhz_after"] = sm_clock_mhz()
    return result


def _compare(path: Path, device: str) -> int:
    """Print each measured launch beside the static model's prediction of it, as cycles of
    one iteration at the SM clock the GPU ran at."""
    from kerncast.core import Array, Kernel, Launch, Scalar
    from kerncast.sim import predict_launch

    measured = json.loads(path.read_text())
    # read right after the last launches: the clock they ran at (the first reading,
    # before the warm-up, may be the idle clock)
    mhz = float(measured["sm_clock_mhz_after"])
    print(f"{measured['device']}, {measured['reps']} iterations, SM clock {mhz:.0f} MHz; "
          "cycles of one iteration")
    print(f"{'kernel':>8} {'block':>5} {'per SM':>6} {'measured':>9} {'predicted':>9} "
          f"{'ratio':>6}")
    for row in measured["rows"]:
        block, grid = row["block"], row["grid"]
        kernel = Kernel(row["kernel"], text=SOURCE, language="cuda",
                        defines={"BLOCK": block})
        args = (Array(np.dtype(np.float32), (grid * block,), intent="out"),
                Scalar(measured["reps"], np.dtype(np.int32)))
        seconds = predict_launch(kernel, Launch((grid,), (block,), 0, args=args,
                                                names=("out", "reps")), device).seconds
        cycles = [t * mhz * 1e6 / measured["reps"] for t in (row["seconds"], seconds)]
        print(f"{row['kernel']:>8} {block:>5} {row['blocks_per_sm']:>6} {cycles[0]:>9.0f} "
              f"{cycles[1]:>9.0f} {cycles[1] / cycles[0]:>6.2f}")
    return 0


if __name__ == "__main__":
    from _gpu_probe import measure_or_compare

    sys.exit(measure_or_compare(__doc__, _measure, _compare))

"""L2 latency of sectors that many SMs request at once (on an NVIDIA GPU, CuPy).

    python tools/shared_sector_probe.py [--device h200]
        [--out data/probes/shared-sector-latency-h200.json]

One warp on each of P SMs (P = 1 to all) chases the same chain of pointers through an
array that stays in the L2 (4 MB, each hop to another sector; ``ld.global.cg`` so the L1
holds nothing), the warps starting together: every hop, P SMs ask the L2 for the same
sector. A second run gives each SM its own chain (P SMs, P distinct sectors a hop). It
prints the cycles per hop (``clock64``, the slowest warp) for each P. The calibration's
L2 hit latency is the first line (one warp alone). Nothing is tuned on it: it says
whether the latency of a sector grows with the SMs requesting it at once, as the
broadcast loads of ``tools/broadcast_load_probe.py`` suggest.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from _gpu_probe import calibration_bench, write_rows

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SOURCE = r"""
extern "C" __global__ void chase(const unsigned int* __restrict__ next, int hops, int stride,
                                 long long* cycles, unsigned int* sink) {
  // one warp a block; block b starts at its own chain when stride > 0
  unsigned int p = (unsigned int)(blockIdx.x * stride);
  __syncthreads();
  long long start = clock64();
  for (int h = 0; h < hops; h++) {
    unsigned int q;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(q) : "l"(next + p));
    p = q;
  }
  long long end = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = end - start;
  if (p == 0xFFFFFFFFu) sink[0] = p;
}
"""
WORDS = 1 << 20            # 4 MB: in the L2, far past any L1
STEP = 8 * 1024 + 8        # words between hops: another sector, another line each time
HOPS = 2048


def _chain() -> np.ndarray:
    """``next[i]``: a cycle through the array in steps of ``STEP`` words."""
    idx = (np.arange(WORDS, dtype=np.int64) + STEP) % WORDS
    return idx.astype(np.uint32)


def main(argv: list[str] | None = None) -> int:
    bench, out = calibration_bench(__doc__, argv)
    if bench is None:
        return 1
    cp = bench.cp
    fn = cp.RawModule(code=SOURCE).get_function("chase")
    nxt = cp.asarray(_chain())
    sink = cp.zeros(1, dtype=cp.uint32)
    rows = []
    print("SMs  same sector  own sectors  (cycles a hop, slowest warp)")
    for sms in sorted({1, 2, 4, 8, 16, 32, 64, bench.sms}):
        per = {how: _hop_cycles(cp, fn, nxt, sink, sms, stride)
               for how, stride in (("same", 0), ("own", 977))}
        rows.append({"sms": sms, "same_sector_cycles": per["same"],
                     "own_sectors_cycles": per["own"]})
        print(f"{sms:4d} {per['same']:12.1f} {per['own']:12.1f}", flush=True)
    write_rows(out, bench, "python tools/shared_sector_probe.py", rows, hops=HOPS)
    return 0


def _hop_cycles(cp, fn, nxt, sink, sms: int, stride: int) -> float:
    """The slowest warp's cycles a hop, the best of three runs after one that brings the
    chain into the L2."""
    cycles = cp.zeros(sms, dtype=cp.int64)
    launch = ((sms,), (32,), (nxt, np.int32(HOPS), np.int32(stride), cycles, sink))
    fn(*launch)
    best = float("inf")
    for _ in range(3):
        fn(*launch)
        cp.cuda.runtime.deviceSynchronize()
        best = min(best, float(cp.asnumpy(cycles).max()) / HOPS)
    return round(best, 1)


if __name__ == "__main__":
    sys.exit(main())

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

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

import numpy as np

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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="h200", help="the spec of GPU 0")
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    from kerncast import KerncastError  # noqa: PLC0415
    from kerncast.calibrate._run import _Bench  # noqa: PLC0415 (the calibration's clock)
    from kerncast.devices import get_device  # noqa: PLC0415

    try:
        bench = _Bench(get_device(args.device))
    except KerncastError as exc:
        print(exc, file=sys.stderr)
        return 1
    cp = bench.cp
    fn = cp.RawModule(code=SOURCE).get_function("chase")
    nxt = cp.asarray(_chain())
    sink = cp.zeros(1, dtype=cp.uint32)
    counts = sorted({1, 2, 4, 8, 16, 32, 64, bench.sms})
    rows = []
    print("SMs  same sector  own sectors  (cycles a hop, slowest warp)")
    for sms in counts:
        per = {}
        for how, stride in (("same", 0), ("own", 977)):
            cycles = cp.zeros(sms, dtype=cp.int64)
            launch = ((sms,), (32,), (nxt, np.int32(HOPS), np.int32(stride), cycles, sink))
            fn(*launch)  # the chain into the L2
            best = None
            for _ in range(3):
                fn(*launch)
                cp.cuda.runtime.deviceSynchronize()
                hop = float(cp.asnumpy(cycles).max()) / HOPS
                best = hop if best is None else min(best, hop)
            per[how] = round(best, 1)
        rows.append({"sms": sms, "same_sector_cycles": per["same"],
                     "own_sectors_cycles": per["own"]})
        print(f"{sms:4d} {per['same']:12.1f} {per['own']:12.1f}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device_name": bench.name, "sm_count": bench.sms,
                       "clock_hz": round(bench.clock_hz), "hops": HOPS,
                       "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(
                           timespec="seconds"),
                       "command": "python tools/shared_sector_probe.py", "rows": rows}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

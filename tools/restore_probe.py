"""Whether a buffer copied back to its first contents before a launch is in the L2 when
the launch starts (on an NVIDIA GPU, CuPy).

    python tools/restore_probe.py [--device h200] [--out data/probes/restore-h200.json]

The ground truth's protocol (``kerncast.measure``'s ``times``) copies every ``inout``
buffer back from a pristine copy before each timed launch, then spins 50 µs, then times
the launch. The static model takes such a buffer as in the L2 where the copy (S MB read,
S MB written) and the launch's buffers (here the same S MB) fit in the L2's usable share
(``kerncast.sim._sharing.restored_warm``), and as in DRAM otherwise. For buffers of S MB
this times, per launch (median of 9), a kernel that reads every float (``read``) and one
that updates every float in place (``update``), each launch preceded by:

- ``restored``: the copy back, as the protocol does;
- ``flushed``: the copy back, then a pass that writes a buffer of twice the L2's size,
  so that the launch finds nothing of its buffer in the L2.

A launch faster after ``restored`` than after ``flushed`` found its buffer in the L2.
Nothing is tuned on it: it says where the model's rule holds.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from _gpu_probe import calibration_bench, write_rows
from l2_carryover_probe import SOURCE as PASSES  # the read and the update

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SOURCE = PASSES + r"""
extern "C" __global__ void scrub(float4* __restrict__ x, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    float4 v = x[i];
    v.x += 1.0f;
    x[i] = v;
  }
}
"""
SIZES_MB, THREADS, REPS = (4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 64), 256, 9


def main(argv: list[str] | None = None) -> int:
    bench, out = calibration_bench(__doc__, argv)
    if bench is None:
        return 1
    cp = bench.cp
    module = cp.RawModule(code=SOURCE)
    kernels = {name: module.get_function(name) for name in ("read", "update", "scrub")}
    spin = bench.fn("spin")
    blocks = bench.sms * 8
    sink = cp.zeros(1, dtype=cp.float32)
    scratch = cp.zeros(2 * bench.l2_bytes // 4, dtype=cp.float32)
    l2_mb = bench.l2_bytes / (1 << 20)
    rows = []
    print("kind      MB  MB/L2  restored us  flushed us  ratio")
    for mb in SIZES_MB:
        n4 = mb * (1 << 20) // 16
        pristine = cp.ones(n4 * 4, dtype=cp.float32)
        buf = cp.empty_like(pristine)
        for kind in ("read", "update"):
            args = (buf, np.int64(n4), sink) if kind == "read" else (buf, np.int64(n4))
            found = {}
            for before in ("restored", "flushed"):
                times = []
                with bench.stream:
                    for rep in range(REPS + 1):
                        buf.data.copy_from_device_async(pristine.data, pristine.nbytes,
                                                        bench.stream)
                        if before == "flushed":
                            kernels["scrub"]((blocks,), (THREADS,),
                                             (scratch, np.int64(scratch.size // 4)))
                        spin((1,), (1,), (np.int64(bench.clock_hz * 50e-6),))
                        start, end = cp.cuda.Event(), cp.cuda.Event()
                        start.record()
                        kernels[kind]((blocks,), (THREADS,), args)
                        end.record()
                        end.synchronize()
                        if rep:  # the first is a warm-up
                            times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
                found[before] = float(np.median(times))
            ratio = found["restored"] / found["flushed"]
            rows.append({"kind": kind, "mb": mb, "mb_over_l2": round(mb / l2_mb, 3),
                         "restored_us": round(found["restored"] * 1e6, 2),
                         "flushed_us": round(found["flushed"] * 1e6, 2),
                         "ratio": round(ratio, 3)})
            print(f"{kind:7s} {mb:4d} {mb / l2_mb:6.2f} {found['restored'] * 1e6:12.1f} "
                  f"{found['flushed'] * 1e6:11.1f} {ratio:6.2f}", flush=True)
        del pristine, buf
        cp.get_default_memory_pool().free_all_blocks()
    write_rows(out, bench, "python tools/restore_probe.py", rows, l2_mb=round(l2_mb, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

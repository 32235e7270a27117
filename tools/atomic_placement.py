"""Does atomic_contention's time depend on where its bins sit in device memory?

The corpus kernel (src/kerncast/corpus/kernels/atomics/atomics.cu) at size large
(2^27 random keys) is timed with its bins array placed at a series of byte offsets
inside one larger allocation, for several nbins. If the L2 slice (or partition) that
serves a line is chosen by physical address, a small bins array (256 bins: 8 lines)
may land on one slice or several, and the time would follow the offset.

    python tools/atomic_placement.py > placement.json      (needs CuPy and a GPU)
"""

from __future__ import annotations

import json
import pathlib
import sys

import cupy as cp
import numpy as np

SOURCE = pathlib.Path(__file__).resolve().parents[1] / \
    "src/kerncast/corpus/kernels/atomics/atomics.cu"
N = 1 << 27
OFFSETS = [0, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072,
           262144, 524288, 1 << 20, 1 << 21, 3 << 20, 5 << 20, 7 << 20, 11 << 20]


def time_ms(fn, reps: int = 3) -> list[float]:
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    fn()
    out = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        out.append(cp.cuda.get_elapsed_time(start, stop))
    return out


def main() -> None:
    kernel = cp.RawModule(code=SOURCE.read_text()).get_function("atomic_contention")
    rng = np.random.default_rng(0)
    keys = cp.asarray(rng.integers(0, 1 << 32, N, dtype=np.uint64).astype(np.uint32))
    pool = cp.zeros((16 << 20) // 4, dtype=cp.int32)
    rows = []
    for nbins in (4, 32, 256, 4096):
        for offset in OFFSETS:
            bins = pool[offset // 4: offset // 4 + nbins]
            args = (keys, bins, np.int32(N), np.int32(nbins))
            ms = time_ms(lambda: kernel(((N + 255) // 256,), (256,), args))
            rows.append({"nbins": nbins, "offset": offset, "address": int(bins.data.ptr),
                         "ms": ms})
            print(nbins, offset, hex(bins.data.ptr), [round(t, 3) for t in ms], file=sys.stderr)
    json.dump({"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
               "n": N, "rows": rows}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()

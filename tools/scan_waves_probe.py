"""How much faster does a launch's steady wave run than its first, for a barrier-bound
kernel?

The corpus's ``scan_block`` (an up-sweep and a down-sweep over shared memory, twenty
barriers a block) is predicted 1.2-1.5x slow at size large on the H200, while its
configurations' resources are far from busy in the simulated round. Here a few of its
configurations are timed on grids of one block per SM, two, one full wave, ten and a
hundred waves: one block alone gives the block's own latency, one wave the blocks of a
wave started together, and the long grids the steady time of a wave, once the resident
blocks have drifted apart.

On a GPU (CuPy; the corpus source with the configuration's defines; CUDA events around
``BATCH`` launches back to back, the median of ``REPS`` batches, after half a second of
launches so that the clocks have risen; clocks as they are, read with nvidia-smi before and
after)::

    python tools/scan_waves_probe.py > scan_waves.json

On any machine, the static model's predictions of the same launches beside them::

    python tools/scan_waves_probe.py --compare data/probes/scan_waves_h200.json
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src/kerncast/corpus/kernels/scan/scan.cu"
CONFIGS = ((128, 8, 1), (128, 8, 0), (128, 2, 1), (256, 4, 1))  # block, items, pad
WAVES = (1, 10, 100)  # whole waves, after one block per SM and two
REPS = 15
BATCH = 10


def _grids(sms: int, per_sm: int) -> list[int]:
    return [sms, 2 * sms] + [w * per_sm * sms for w in WAVES]


def _measure() -> dict:
    """Every configuration on every grid, timed on this machine's GPU."""
    import cupy as cp
    from _gpu_probe import batched, sm_clock_mhz, warm_up

    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    text = SOURCE.read_text()
    result: dict = {"device": props["name"].decode(), "sms": sms, "reps": REPS,
                    "batch": BATCH, "measured_at": datetime.now(timezone.utc).isoformat(),
                    "cupy": cp.__version__, "sm_clock_mhz_before": sm_clock_mhz(),
                    "rows": []}
    for block, items, pad in CONFIGS:
        module = cp.RawModule(code=text, options=(f"-DBLOCK={block}", f"-DITEMS={items}",
                                                  f"-DPAD={pad}"))
        kernel = module.get_function("scan_block")
        per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.kernel.ptr, block, 0)
        seg = block * items
        for grid in _grids(sms, per_sm):
            n = grid * seg
            x = cp.arange(n, dtype=cp.int32) % 7
            y = cp.zeros(n, dtype=cp.int32)
            args = (x, y, np.int32(n), np.int32(seg))
            warm_up(cp, lambda: kernel((grid,), (block,), args))
            seconds = batched(cp, kernel, grid, block, args, launches=BATCH, batches=REPS)
            row = {"block": block, "items": items, "pad": pad, "blocks_per_sm": per_sm,
                   "grid": grid, "seconds": seconds}
            result["rows"].append(row)
            print(row, file=sys.stderr)
    result["sm_clock_mhz_after"] = sm_clock_mhz()
    return result


def _compare(path: Path, device: str) -> int:
    """Print each measured launch beside the static model's prediction of it."""
    from kerncast.core import Array, Kernel, Launch, Scalar
    from kerncast.sim import predict_launch

    measured = json.loads(path.read_text())
    print(f"{'block':>5} {'items':>5} {'pad':>3} {'grid':>7} {'measured':>11} {'predicted':>11}"
          f" {'ratio':>6} {'round cycles':>12} phases")
    for row in measured["rows"]:
        block, items, pad, grid = row["block"], row["items"], row["pad"], row["grid"]
        n = grid * block * items
        kernel = Kernel("scan_block", path=SOURCE, language="cuda",
                        defines={"BLOCK": block, "ITEMS": items, "PAD": pad})
        args = (Array(np.dtype(np.int32), (n,), intent="in"),
                Array(np.dtype(np.int32), (n,), intent="out"),
                Scalar(n, np.dtype(np.int32)), Scalar(block * items, np.dtype(np.int32)))
        launch = Launch((grid,), (block,), 0, args=args, names=("x", "y", "n", "seg"))
        result = predict_launch(kernel, launch, device)
        info = result.based_on
        print(f"{block:>5} {items:>5} {pad:>3} {grid:>7} {row['seconds'] * 1e6:>9.2f}us "
              f"{result.seconds * 1e6:>9.2f}us {result.seconds / row['seconds']:>6.2f} "
              f"{info['round_cycles']:>12.0f} {info['block_phases']}")
    return 0


if __name__ == "__main__":
    from _gpu_probe import measure_or_compare

    sys.exit(measure_or_compare(__doc__, _measure, _compare))

"""The static model on the calibration's own loaded-DRAM probe (no GPU needed).

    python tools/dram_probe_check.py [--device h200]

``kerncast calibrate --only dram`` times ``dram_inflight_N`` (``calibrate/ubench.cu``):
one wave of blocks of two warps streams a buffer, each warp keeping N lines in flight,
over 2 to 64 warps per SM; the calibration keeps each launch's bandwidth. This predicts
every one of those launches statically on the device (the kernel from the shipped
source, the launch as the probe made it, the SM count and clock of the run) and prints
measured and predicted time side by side. The model reads the probe's launches with the
most warps at each level of bytes in flight (one or few lines a warp); the others (fewer
warps, more lines each) are a check it was not given. The last line is ``probe error
one line a warp: <X>% several: <Y>%`` (mean signed error of each group).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

def main(argv: list[str] | None = None) -> int:
    from kerncast.calibrate import LOADED_CURVE, load_calibration
    from kerncast.calibrate import MICROBENCHMARKS
    from kerncast.calibrate._run import LOADED_BYTES, LOADED_THREADS
    from kerncast.core import Kernel, Launch
    from kerncast.core._args import Array, Scalar
    from kerncast.sim import predict_launch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="h200")
    args = parser.parse_args(argv)
    calibration = load_calibration(args.device)
    curve = calibration.curves.get(LOADED_CURVE)
    if not curve:
        print(f"the calibration of {args.device} has no loaded-DRAM probe; run "
              f"'kerncast calibrate --device {args.device} --only dram' on that GPU",
              file=sys.stderr)
        return 2
    sms = int(calibration.provenance["sm_count"])
    n = max(LOADED_BYTES, 4 * int(calibration.provenance["l2_bytes"])) // 4
    errors: dict[bool, list[float]] = {True: [], False: []}
    print(f"{'KiB/SM':>7s} {'warps':>5s} {'lines':>5s} {'measured':>10s} {'predicted':>10s} "
          f"{'error':>7s}")
    for inflight, warps, gbs, _ in curve:
        lines = int(inflight // (warps * 128))
        blocks = sms * int(warps) * 32 // LOADED_THREADS
        threads = blocks * LOADED_THREADS
        trips = n // (threads * lines)
        kernel = Kernel(f"dram_inflight_{lines}", path=MICROBENCHMARKS, options=("-std=c++17",))
        launch = Launch((blocks, 1, 1), (LOADED_THREADS, 1, 1), args=(
            Array(dtype=np.float32, shape=(n,)), Scalar(np.int64(trips)),
            Array(dtype=np.float32, shape=(1,))))
        predicted = predict_launch(kernel, launch, args.device, sm_count=sms).seconds
        measured = trips * threads * lines * 4 / (gbs * 1e9)
        error = 100 * (predicted / measured - 1)
        errors[lines == 1].append(error)
        print(f"{inflight / 1024:7.2f} {warps:5.0f} {lines:5d} {measured * 1e3:8.3f}ms "
              f"{predicted * 1e3:8.3f}ms {error:+6.1f}%", flush=True)
    print(f"probe error one line a warp: {np.mean(errors[True]):+.1f}% "
          f"several: {np.mean(errors[False]):+.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())

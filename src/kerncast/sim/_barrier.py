"""The cost the static model charges for a barrier's release, from the calibration's
measured barrier loop.

``kerncast calibrate`` times ``barrier_loop`` (``src/kerncast/calibrate/ubench.cu``: one
block an SM of 1 to 32 warps, each iteration an FMA and a ``__syncthreads``) and keeps
the cycles of one iteration (``barrier_cycles_<w>_warps``). That period holds the warps'
issue of the loop too, which the simulation issues itself: charged whole as the release,
the simulated loop took 1.6x (1 warp) to 1.4x (32 warps) the measured period on an H200.
The release figure (``barrier_release_cycles_<w>_warps``,
:meth:`~kerncast.sim._machine.Machine.barrier_cycles`) is the cost with which the
simulated loop takes the measured period: :func:`release_figures` simulates the loop with
the static model and corrects the cost by the difference until it does
(``tools/barrier_release.py`` writes them into a shipped calibration).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from kerncast.calibrate import MICROBENCHMARKS, Calibration, load_calibration
from kerncast.core import Array, Kernel, Launch, Scalar
from kerncast.devices import get_device
from kerncast.sim._machine import MEASURED, RELEASE, barrier_figures, machine_for
from kerncast.sim._predict import predict_launch

__all__ = ["release_figures", "simulated_period"]

ITERATIONS = 4000
STEPS = 5  # corrections of the cost (the period grows about a cycle a cycle of cost)


def simulated_period(device: str, calibration: Calibration, warps: int) -> float:
    """Cycles of one iteration of the calibration's barrier loop, one block of ``warps``
    warps on each SM of ``device``, as the static model simulates it with
    ``calibration``."""
    dev = get_device(device)
    sms = dev.compute.sm_count
    kernel = Kernel("barrier_loop", path=MICROBENCHMARKS, language="cuda")
    args = (Scalar(ITERATIONS, np.dtype(np.int32)),
            Array(np.dtype(np.int64), (sms,), intent="out"),
            Array(np.dtype(np.float32), (1,), intent="out"))
    launch = Launch((sms,), (32 * warps,), 0, args=args, names=("iters", "cycles", "sink"))
    result = predict_launch(kernel, launch, dev, machine=machine_for(dev, calibration))
    return float(result.based_on["round_cycles"]) / ITERATIONS


def release_figures(device: str) -> dict[int, tuple[float, float, float]]:
    """Per block size of the calibration's barrier loop (warps), (the measured period,
    the release cost, the simulated period with it), from ``device``'s shipped
    calibration; empty where it has no measured periods."""
    cal = load_calibration(get_device(device).key)
    out = {}
    for warps, target in barrier_figures(cal.sync, MEASURED):
        cost = 0.0
        for _ in range(STEPS):
            trial = replace(cal, sync={**cal.sync, f"{RELEASE}{warps}_warps": cost})
            cost = max(0.0, cost + target - simulated_period(device, trial, warps))
        trial = replace(cal, sync={**cal.sync, f"{RELEASE}{warps}_warps": round(cost, 1)})
        out[warps] = (target, round(cost, 1), simulated_period(device, trial, warps))
    return out

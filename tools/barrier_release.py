"""Derive the barrier release figures the static model charges from a shipped
calibration's measured barrier loop (:mod:`kerncast.sim._barrier`), and print them::

    python tools/barrier_release.py --device h200 [--write]

Per block size: the measured period, the release cost and the simulated period with it;
``--write`` stores the figures (``barrier_release_cycles_<w>_warps``) in the device's
shipped calibration (``src/kerncast/calibrate/data/<device>.json``). Run it again when
the simulation of issue or barriers changes: ``tests/sim/test_barrier.py`` checks that
the shipped figures still give the measured periods.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def main() -> int:
    from kerncast.calibrate import CALIBRATION_DIR, load_calibration
    from kerncast.devices import get_device
    from kerncast.sim._barrier import release_figures
    from kerncast.sim._machine import RELEASE

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="h200", help="a device with a shipped calibration")
    parser.add_argument("--write", action="store_true",
                        help="store the release figures in the shipped calibration")
    args = parser.parse_args()
    figures = release_figures(args.device)
    if not figures:
        print(f"the calibration of {args.device} has no barrier_cycles_*: run kerncast "
              "calibrate on the GPU first", file=sys.stderr)
        return 2
    print(f"{'warps':>5} {'measured':>9} {'release':>8} {'simulated':>9}")
    for warps, (target, cost, period) in figures.items():
        print(f"{warps:>5} {target:>9.1f} {cost:>8.1f} {period:>9.1f}")
    if args.write:
        key = get_device(args.device).key
        cal = load_calibration(key)
        sync = {k: v for k, v in cal.sync.items() if not k.startswith(RELEASE)}
        sync.update({f"{RELEASE}{w}_warps": cost for w, (_, cost, _) in figures.items()})
        provenance = {**cal.provenance, "barrier_release": (
            "derived by tools/barrier_release.py: the release cost with which the static "
            "model's simulation of barrier_loop takes barrier_cycles_*")}
        replace(cal, sync=sync, provenance=provenance).save(CALIBRATION_DIR / f"{key}.json")
        print(f"written to {CALIBRATION_DIR / f'{key}.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

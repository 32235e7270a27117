"""A 1,000-configuration static sweep, from an empty disk cache and again with it warm.

    python benchmarks/sweep_speed.py [--configs 1000] [--workers 2] [--executor pool]

The space is ``benchmarks/scaleout.py``'s: a strided scale kernel over ``block_size_x``
and ``work_per_thread``, both compile-time defines as in Kernel Tuner, so that every
configuration is a binary of its own (compiled, assembled by ptxas and disassembled by
nvdisasm once, then read from the disk cache). The first sweep runs with
``$KERNCAST_CACHE`` set to a new directory (cold); the second repeats it (warm), as a
sweep of the same space with other arguments or a resumed one would. No GPU needed.

Last line: ``sweep <N> configurations: cold <C> s warm <W> s (<executor>, <K> workers)``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--executor", default="pool")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kerncast-sweep-cache-") as cache:
        os.environ["KERNCAST_CACHE"] = cache  # the workers inherit it
        import numpy as np  # noqa: PLC0415
        from scaleout import run, space  # noqa: PLC0415

        n = np.int32(1 << 22)
        arrays = [np.zeros(n, np.float32), np.ones(n, np.float32), np.float32(2.0), n]
        tune = space(args.configs)
        configs = len(tune["block_size_x"]) * len(tune["work_per_thread"])
        cold, first = run(args.executor, args.workers, tune, arrays, n)
        print(f"cold: {cold:.1f} s, {configs / cold:.1f} configurations/s", flush=True)
        warm, again = run(args.executor, args.workers, tune, arrays, n)
        print(f"warm: {warm:.1f} s, {configs / warm:.1f} configurations/s", flush=True)
        if first != again:
            print("the warm sweep's predictions differ from the cold one's")
            return 1
    print(f"sweep {configs} configurations: cold {cold:.1f} s warm {warm:.1f} s "
          f"({args.executor}, {args.workers} workers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

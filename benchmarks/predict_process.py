"""What a ``kerncast predict`` process costs beyond its prediction.

    python benchmarks/predict_process.py [--repeat 5] [--device h100]

Runs ``kerncast predict ... --json`` as a new process, as a user's shell or script does,
for corpus kernels and user kernels given as a source file or a launch file, and takes
each process's wall time against the prediction's own ``based_on.seconds_to_predict``. The
difference is interpreter start-up, imports, argument parsing and output. Each command
runs once untimed first, so that Python's bytecode and the disk cache of compiled kernels
are written, as they are after a package's first use (``PYTHONDONTWRITEBYTECODE`` is
unset for the children). Prints per command the median wall time, prediction time and
difference, then last ``predict process overhead median: <M> s max: <X> s`` over every
timed process. No GPU needed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNCAST = [sys.executable, "-m", "kerncast"]
USER = ROOT / "tests" / "userkernels"


def _commands() -> dict[str, list[str]]:
    """Name -> arguments of ``kerncast predict``: corpus kernels, a source file with its
    launch on the command line, and two launch files."""
    return {
        "corpus:copy_vector small": ["corpus:copy_vector", "--size", "small"],
        "corpus:matmul_tiled medium": ["corpus:matmul_tiled", "--size", "medium"],
        "corpus:stencil7_naive small": ["corpus:stencil7_naive", "--size", "small"],
        "saxpy.cu (README)": [str(USER / "saxpy.cu"), "--kernel", "saxpy", "--grid", "4096",
                              "--block", "256", "--arg", "n=int32:1048576",
                              "--arg", "a=float32:2", "--arg", "x=float32[n]:uniform(-1,1)",
                              "--arg", "y=float32[n]"],
        "heat7.toml": [str(USER / "heat7.toml")],
        "half_scale.toml": [str(USER / "half_scale.toml")],
    }


def _run(args: list[str], device: str, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, seconds_to_predict) of one process."""
    start = time.perf_counter()
    out = subprocess.run([*KERNCAST, "predict", *args, "--device", device, "--json"],
                         capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"kerncast predict {' '.join(args)} failed ({out.returncode}):\n"
                         f"{out.stderr[-2000:]}")
    return wall, float(json.loads(out.stdout)["based_on"]["seconds_to_predict"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed processes per command")
    parser.add_argument("--device", default="h100")
    args = parser.parse_args(argv)

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    overheads: list[float] = []
    print(f"{'command':30s} {'wall s':>8s} {'predict s':>10s} {'overhead s':>11s}")
    for name, cmd in _commands().items():
        _run(cmd, args.device, env)  # bytecode and the compile cache, as after first use
        runs = [_run(cmd, args.device, env) for _ in range(args.repeat)]
        walls, preds = zip(*runs)
        extra = [w - p for w, p in runs]
        overheads += extra
        print(f"{name:30s} {statistics.median(walls):8.3f} {statistics.median(preds):10.3f} "
              f"{statistics.median(extra):11.3f}", flush=True)
    print(f"predict process overhead median: {statistics.median(overheads):.3f} s "
          f"max: {max(overheads):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

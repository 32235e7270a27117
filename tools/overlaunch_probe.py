"""Time a kernel's over-launched grid against its parts: the blocks that work, and the
blocks that only fail their bounds checks.

    PYTHONPATH=src python3 tools/overlaunch_probe.py --device h200 --out data/probes/overlaunch-h200.json

``tests/userkernels/large/tile_transpose.toml`` launches four times the blocks its matrix
needs (grid 256 x 1,024 of 32 x 8 threads for 8,192 x 8,192 floats: a block moves a 32 x
32 tile, so 256 x 256 blocks cover it). The blocks are dispatched in order of their
linear index, so the 65,536 that work come first and the 196,608 past the matrix after
them. Timed here, through the user's path (CuPy):

- ``over``: the launch file as it is;
- ``right``: the grid that covers the matrix (256 x 256), the same work;
- ``idle``: the launch file with ``rows = 0``, so that every block fails its bounds checks;
- ``diffuse``: ``diffuse_interior``'s launch file (the same grid and block shape, every block
  at work), for comparison.

If the over-launched grid runs as its two parts one after the other, ``over`` is about
``right`` plus three quarters of ``idle``. Writes the medians with the GPU's name.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
LARGE = ROOT / "tests" / "userkernels" / "large"


def _variant(name: str, text: str, tmp: Path) -> Path:
    path = tmp / f"{name}.toml"
    source = (ROOT / "tests" / "userkernels").as_posix()
    path.write_text(text.replace('source = "../', f'source = "{source}/'))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="h200")
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args()
    from kerncast.core import load_launch_file
    from kerncast.measure import CupyBackend
    from kerncast.measure._api import monitor_for
    from kerncast.measure._job import user_job

    backend = CupyBackend(device=args.device)
    monitor = monitor_for(backend)
    over = (LARGE / "tile_transpose.toml").read_text()
    texts = {"over": over,
             "right": over.replace("grid = [256, 1024]", "grid = [256, 256]"),
             "idle": over.replace("rows=int32:8192", "rows=int32:0"),
             "diffuse": (LARGE / "diffuse_interior.toml").read_text()}
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in texts.items():
            kernel, launch = load_launch_file(_variant(name, text, Path(tmp))).launch({})
            launch = dataclasses.replace(launch, size=f"overlaunch/{name}")
            row = backend.measure(user_job(kernel, launch), monitor=monitor)
            rows[name] = {"grid": list(launch.grid), "block": list(launch.block),
                          "status": row["status"], "time_median_s": row.get("time_median_s"),
                          "time_iqr_s": row.get("time_iqr_s")}
            print(name, rows[name], file=sys.stderr, flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "device": backend.device_key, "device_name": backend.describe()["device_name"],
        "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(), "launches": rows},
        indent=1, default=str))


if __name__ == "__main__":
    main()

"""The static model against the loop-trip probe: cycles a trip measured and predicted.

    python tools/loop_trip_model.py [data/probes/loop_trip_warps_h200.json] [--device h200]

Predicts each launch of ``tools/loop_trip_probe.py`` (its source, its grid, its blocks,
its trip count) with the static model on ``--device`` and prints per row the warps per
scheduler, the unroll, the cycles a trip measured and predicted (the measured figure
scaled by the ratio of the times), and that ratio. No GPU needed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def _source(unroll: int, chains: int) -> str:
    text = (ROOT / "tools" / "loop_trip_probe.py").read_text()
    source = text.split('SOURCE = r"""')[1].split('"""')[0]
    return source.replace("CH]", f"{chains}]").replace("j < CH", f"j < {chains}") \
        .replace("u < UNROLL", f"u < {unroll}")


def main() -> int:
    import kerncast  # noqa: PLC0415 (after the path above)

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("probe", nargs="?", default=str(ROOT / "data/probes/loop_trip_warps_h200.json"))
    ap.add_argument("--device", default="h200")
    args = ap.parse_args()
    probe = json.loads(Path(args.probe).read_text())
    print("warps/scheduler unroll measured predicted ratio")
    for row in probe["rows"]:
        block = row.get("block", probe.get("block"))
        per_sm = row.get("blocks_per_sm", probe.get("blocks_per_sm"))
        grid = probe["sms"] * per_sm
        out = np.zeros(grid * block, np.float32)
        launch = [out, np.int32(row["trips"]), np.float32(0.999999), np.float32(1e-7)]
        p = kerncast.predict("loop", _source(row["unroll"], probe["chains"]), (grid * block,),
                             launch, params={"block_size_x": block}, device=args.device)
        ratio = p.seconds / row["seconds"]
        warps = row.get("warps_per_scheduler", block // 32 * per_sm // 4)
        print(f"{warps:15d} {row['unroll']:6d} {row['cycles_per_trip']:8.2f} "
              f"{row['cycles_per_trip'] * ratio:9.2f} {ratio:5.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

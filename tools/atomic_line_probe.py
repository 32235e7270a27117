"""The line-atomics curve of ``kerncast calibrate`` measured alone: global atomic adds
per second when each warp adds to the 32 words of one 128-byte line and the warps are
spread over 1 to 64 lines (blocks merging their private histograms). Run on a GPU:

    PYTHONPATH=src python3 tools/atomic_line_probe.py --device h200 --out $OUT/line.json

``atomic_global_per_s_vs_lines`` in the output goes into the device's calibration
(``src/kerncast/calibrate/data/<device>.json``, ``curves``) with the provenance beside it.
``data/probes/atomic_line_h200.json`` was written by this tool's first form: the same
kernel, threads and repetitions, its curve under ``word_operations_per_s_by_lines`` and
the rest of the atomics part beside it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="h200")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    from kerncast.calibrate._run import _atomic_lines, _Bench, _provenance
    from kerncast.devices import get_device

    bench = _Bench(get_device(args.device))
    curves = _atomic_lines(bench, print)
    args.out.write_text(json.dumps({"provenance": _provenance(bench), **curves}, indent=1))


if __name__ == "__main__":
    main()

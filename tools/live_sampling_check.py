"""Live ``sampling`` predictions on the GPU at hand against the dataset's times rows.

For each kernel named (default launch, size large), ``kerncast.predict`` runs the
samples the model takes on the GPU and extrapolates; the row then holds the prediction,
the dataset's measured time of that launch, the time of the samples taken and how long
the whole prediction took (inputs included).

    python tools/live_sampling_check.py h100 KERNEL[,KERNEL...] [SECONDS] > live.json
                                                               (needs CuPy and a GPU)

No kernel starts after SECONDS (default 500).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import time

from kerncast.corpus import get_kernel
from kerncast.data import Dataset
from kerncast.models import predict


def _truths(device: str):
    data = Dataset.read(f"data/{device}")
    t = data.times
    return t[(t["experiment"] == "times") & (t["status"] == "ok") & (t["size"] == "large")
             & (t["sm_count"] == t["sm_count"].max())]


def main(device: str, names: list[str], seconds: float) -> None:
    deadline = time.time() + seconds
    truths, rows = _truths(device), []
    for name in names:
        if time.time() > deadline:
            print(f"stopped before {name}: out of time", file=sys.stderr)
            break
        start = time.time()
        p = predict(name, model="sampling", device=device, size="large")
        label = get_kernel(name).launch("large").label()
        row = truths[(truths["kernel"] == name) & (truths["config"] == label)]
        rows.append({"kernel": name, "config": label, "predicted_s": p.seconds,
                     "measured_s": float(row["time_median_s"].iloc[0]) if len(row) else None,
                     "sample_seconds": p.based_on.get("sample_seconds"),
                     "points": p.based_on.get("points"), "method": p.based_on.get("method"),
                     "elapsed_s": time.time() - start})
        print(name, f"{p.seconds * 1e3:.3f} ms", file=sys.stderr)
    json.dump({"device": device, "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(),
               "rows": rows}, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2].split(","), float(sys.argv[3]) if len(sys.argv) > 3 else 500)

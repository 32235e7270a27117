"""Do cold samples pay for the dirty lines the L2 flush leaves behind?

The flush before a cold sample reads and writes a buffer twice the L2's size, so the
sample starts with an L2 full of dirty lines and writes them back as it evicts them:
about 2x the L2 of DRAM writes, spread over the sample's first waves. This times the
sample ladder of some corpus kernels (size large, default launch) with that flush and
with one that only reads (the L2 writes back during the flush), and their whole grid
both ways, through the measurement backend.

    python tools/flush_probe.py KERNEL... > flush.json      (needs CuPy and a GPU)
"""

from __future__ import annotations

import datetime as dt
import json
import sys

from kerncast.corpus import get_kernel
from kerncast.measure._factory import make_backend
from kerncast.measure._samples import measure_full, measure_samples


def main(names: list[str]) -> None:
    backend = make_backend("cupy", device="h100")
    rows = []
    for name in names:
        kernel = get_kernel(name)
        config = kernel.launch("large")
        for writes in (True, False):
            backend.flush_writes = writes
            for row in measure_samples(backend, kernel, config) + \
                    measure_full(backend, kernel, config):
                if row["status"] != "ok" or row["l2_state"] != "cold":
                    continue
                rows.append({"kernel": name, "config": config.label(), "flush_writes": writes,
                             "k": row["k"], "blocks_launched": row["blocks_launched"],
                             "blocks": row["blocks"], "psat": row["psat"],
                             "time_median_s": row["time_median_s"]})
                print(name, writes, row["k"], f"{row['time_median_s'] * 1e6:.2f} us",
                      file=sys.stderr)
    json.dump({"device": backend.describe()["device_name"],
               "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(), "rows": rows},
              sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])

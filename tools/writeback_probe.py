"""Does a cold sample that also pays for writing back its own stores scale like the
full run from its first waves?

A cold sample starts after a flush of the L2. With the writing flush (``kc_flush``)
the sample inherits about 50 MB of dirty lines and writes them back as it evicts
them, so its first waves cost too much; with the reading flush (``kc_flush_clean``)
its own stores stay in the L2 and are never written back within the sample, so its
first waves cost too little. This times, for each kernel's default launch at size
large, the ladder of samples and the whole grid three ways:

* ``dirty``: writing flush, then the sample (the datasets' cold samples);
* ``clean``: reading flush, then the sample;
* ``paid``: reading flush, then the sample and a second reading flush in the same
  interval, less that flush's time after a flush (with an L2 of clean lines): the
  sample plus the write-back of the dirty lines it leaves.

``clean`` and ``paid`` come from the same launches (an event between the sample and
the trailing flush).

    python tools/writeback_probe.py [KERNEL...] > writeback.json     (needs CuPy and a GPU)
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sys
import time

import numpy as np

from kerncast.corpus import get_kernel, list_kernels
from kerncast.measure._factory import make_backend
from kerncast.measure._samples import ladder, resident_blocks
from kerncast.measure._session import Failure, LaunchSession

REPS = 15
MAX_FRACTION, MAX_SECONDS = 0.10, 400e-6


def _flush(backend, writes: bool) -> None:
    backend.flush_writes = writes
    backend.flush_l2()


def _times(backend, session, sample, mid, writes: bool, reps: int = REPS) -> np.ndarray:
    """Per repetition: (sample seconds, sample + trailing clean flush seconds)."""
    out = []
    for i in range(reps + 2):
        session.restore()
        _flush(backend, writes)
        backend.spin()
        backend._start.record(backend.stream)
        if sample is not None:
            backend.launch(session.compiled, sample, session.dev)
        mid.record(backend.stream)
        _flush(backend, False)
        backend._stop.record(backend.stream)
        backend._stop.synchronize()
        cp = backend._cp
        if i >= 2:
            out.append((cp.cuda.get_elapsed_time(backend._start, mid) * 1e-3,
                        cp.cuda.get_elapsed_time(backend._start, backend._stop) * 1e-3))
    return np.array(out)


def _probe(backend, name: str, rows: list[dict]) -> None:
    kernel = get_kernel(name)
    config = kernel.launch("large")
    mid = backend._cp.cuda.Event()
    t0 = time.time()
    with LaunchSession(backend, kernel, config) as session:
        psat = resident_blocks(backend, config, session.resources)
        ref = float(np.median(_times(backend, session, None, mid, False, 31)[:, 1]))
        rungs = ladder(config, psat, backend.sm_count)
        full = {"k": 0, "blocks_launched": config.blocks, "grid": config.grid}
        chosen, stop = [], False
        for rung in rungs:
            chosen.append({"k": rung["k"], "blocks_launched": rung["blocks_launched"],
                           "grid": (rung["sample_grid_x"], rung["sample_grid_y"],
                                    rung["sample_grid_z"])})
            if rung["k"] >= 5 and rung["grid_fraction"] >= MAX_FRACTION:
                break
        for rung in chosen + [full]:
            if rung["k"] and stop:
                continue  # longer rungs would only cost time; the full grid still runs
            sample = dataclasses.replace(session.launch, grid=tuple(rung["grid"]))
            dirty = _times(backend, session, sample, mid, True)[:, 0]
            both = _times(backend, session, sample, mid, False)
            meds = {"dirty": float(np.median(dirty)), "clean": float(np.median(both[:, 0])),
                    "paid": float(np.median(both[:, 1])) - ref}
            for flavor, seconds in meds.items():
                rows.append({"kernel": name, "config": config.label(), "flavor": flavor,
                             "k": rung["k"], "blocks_launched": rung["blocks_launched"],
                             "blocks": config.blocks, "psat": psat, "time_median_s": seconds,
                             "flush_ref_s": ref})
            stop = stop or (rung["k"] >= 5 and meds["dirty"] >= MAX_SECONDS)
    print(f"{name}: {len(chosen)} rungs, ref {ref * 1e6:.1f} us, {time.time() - t0:.0f} s",
          file=sys.stderr)


def main(names: list[str]) -> None:
    backend = make_backend("cupy")
    names = names or [k.name for k in list_kernels() if "cuda" in k.spec.languages]
    rows: list[dict] = []
    for name in names:
        try:
            _probe(backend, name, rows)
        except Failure as exc:
            print(f"{name}: {exc.status}: {exc.error}", file=sys.stderr)
    json.dump({"device": backend.describe()["device_name"],
               "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(),
               "reps": REPS, "rows": rows}, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])

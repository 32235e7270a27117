"""What the GPU probes in tools/ share: the spin kernel ahead of each timed launch, the
timing, the SASS of the probe source and the provenance of the output. Needs CuPy,
nvcc, cuobjdump and NVML; the GPU's clocks are read, never set."""

from __future__ import annotations

import datetime as dt
import subprocess
import tempfile
from pathlib import Path

import numpy as np

SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) { }
}
"""


def timed(cp, spin, kernel, grid, block, args, reps: int = 5) -> float:
    """Median seconds of one launch, a spin kernel ahead of the start event."""
    kernel(grid, block, args)
    cp.cuda.runtime.deviceSynchronize()
    times = []
    for _ in range(reps):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        spin((1,), (1,), (np.int64(100_000),))
        start.record()
        kernel(grid, block, args)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
    return float(np.median(times))


def sass(source: str) -> str:
    """``cuobjdump -sass`` of ``source`` compiled for sm_90."""
    with tempfile.TemporaryDirectory() as tmp:
        src, cubin = Path(tmp) / "probe.cu", Path(tmp) / "probe.cubin"
        src.write_text(source)
        subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-O3", str(src), "-o", str(cubin)],
                       check=True)
        return subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True,
                              text=True, check=True).stdout


def provenance(props: dict, pynvml, method: str) -> dict:
    """The device, driver, time and method an output's rows were measured with."""
    name = props["name"]
    return {"device_name": name.decode() if isinstance(name, bytes) else name,
            "sm_count": props["multiProcessorCount"],
            "driver": pynvml.nvmlSystemGetDriverVersion(),
            "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(), "method": method}

"""Throughput of a static sweep on 1 and 2 workers: a local process pool and a local Ray
cluster, against the serial sweep; and of a PoCL measurement campaign the same way.

    python benchmarks/scaleout.py [--configs 1000] [--workers 2] [--no-ray] [--no-pocl]

The sweep is Kernel Tuner style: a strided scale kernel (written here) over
``block_size_x`` (32 to 1024 in steps of 32) and ``work_per_thread`` (1 to 32), a
compile-time define, so that each configuration builds its own binary: the first
``--configs`` of the 1,024 configurations. Every executor's predictions are compared with
the serial ones (they must be equal). A first serial sweep, not timed, fills the disk cache
of compiled binaries, so that every timed sweep finds it warm. Reported: configurations
per second and the speedup of 2 workers over 1 for the pool and for Ray (start-up of the
workers included).

The PoCL campaign (``--pocl-kernels``, sizes small and medium, three launch
configurations each (``spread``), the ``times`` experiment) runs once as one worker on
the whole machine, then on ``--workers`` slices of its cores (``Campaign(slices=)``: each
worker keeps its own cores) on the pool and on Ray, each run into a new dataset with an
empty PoCL kernel cache, so that every run compiles what it measures. Reported: rows per
second and the speedup over one worker. A slice is a device of its own (fewer cores), so
the sliced runs' rows are not the whole machine's; they are compared on throughput only.
Skipped where PoCL is missing.

Last line: ``scaleout speedup 2 workers: X (pool) Y (ray)`` (the static sweep).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

import kerncast  # noqa: E402

SOURCE = """
__global__ void scale(float *y, const float *x, float a, int n) {
    int first = (blockIdx.x * block_size_x + threadIdx.x) * work_per_thread;
    for (int k = 0; k < work_per_thread; k++) {
        int i = first + k;
        if (i < n) y[i] = a * x[i];
    }
}
"""


def space(count: int) -> dict:
    blocks = list(range(32, 1025, 32))
    works = list(range(1, 33))
    if count < len(blocks) * len(works):
        works = works[:max(1, -(-count // len(blocks)))]
    return {"block_size_x": blocks, "work_per_thread": works}


def run(executor: str, workers: int, tune: dict, args: list, n: np.int32) -> tuple[float, list]:
    start = time.perf_counter()
    results, _ = kerncast.sweep("scale", SOURCE, n, args, tune, executor=executor,
                                workers=workers, grid_div_x=["block_size_x", "work_per_thread"])
    return time.perf_counter() - start, [r["time"] for r in results]


POCL_KERNELS = ("copy_vector,matmul_tiled,arith_fp32,reduce_tree,thermal_step,transpose_naive,"
                "histo_shared,scan_block")


def campaign_rate(kernels: list[str], slices: int, executor: str) -> tuple[float, int]:
    """Rows per second of a PoCL campaign over ``kernels`` (a new dataset, an empty
    kernel cache) and its rows."""
    from kerncast.measure import Campaign  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="kerncast-scaleout-") as scratch:
        os.environ["POCL_CACHE_DIR"] = str(Path(scratch) / "pocl-cache")
        start = time.perf_counter()
        result = Campaign(Path(scratch) / "data", device="cpu", backend="pocl",
                          kernels=kernels, sizes=["small", "medium"], configs="spread", slices=slices,
                          executor=executor, log=False).run()
        seconds = time.perf_counter() - start
    if result.remaining or set(result.statuses) != {"ok"}:
        raise RuntimeError(f"the PoCL campaign left {result.remaining} items, statuses "
                           f"{result.statuses}")
    return result.measured / seconds, result.measured


def pocl_scaleout(kernels: list[str], workers: int, ray: bool) -> None:
    one, rows = campaign_rate(kernels, 0, "pool")
    print(f"pocl campaign, 1 worker (the whole machine): {rows} rows, {one:.2f} rows/s",
          flush=True)
    for executor in ("pool", "ray") if ray else ("pool",):
        rate, rows = campaign_rate(kernels, workers, executor)
        print(f"pocl campaign, {executor} {workers} slices: {rows} rows, {rate:.2f} rows/s, "
              f"{rate / one:.2f}x", flush=True)
        if executor == "ray":
            import ray as ray_module  # noqa: PLC0415

            ray_module.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray cluster")
    parser.add_argument("--no-pocl", action="store_true", help="skip the PoCL campaign")
    parser.add_argument("--pocl-kernels", default=POCL_KERNELS,
                        help="corpus kernels of the PoCL campaign, comma-separated")
    args = parser.parse_args(argv)
    if not args.no_pocl and importlib.util.find_spec("pyopencl") is not None:
        pocl_scaleout(args.pocl_kernels.split(","), args.workers, not args.no_ray)
    n = np.int32(1 << 22)
    arrays = [np.zeros(n, np.float32), np.ones(n, np.float32), np.float32(2.0), n]
    tune = space(args.configs)
    configs = len(tune["block_size_x"]) * len(tune["work_per_thread"])
    print(f"{configs} configurations", flush=True)
    run("serial", 1, tune, arrays, n)  # compiles every configuration into the disk cache
    serial_s, want = run("serial", 1, tune, arrays, n)
    print(f"serial: {serial_s:.1f} s, {configs / serial_s:.1f} configurations/s", flush=True)
    speedups = {}
    for executor in ("pool", "ray"):
        if executor == "ray" and args.no_ray:
            continue
        times = {}
        for workers in (1, args.workers):
            seconds, got = run(executor, workers, tune, arrays, n)
            if got != want:
                print(f"{executor} with {workers} workers: predictions differ from serial")
                return 1
            times[workers] = seconds
            print(f"{executor} {workers} worker(s): {seconds:.1f} s, "
                  f"{configs / seconds:.1f} configurations/s", flush=True)
            if executor == "ray":
                import ray  # noqa: PLC0415

                ray.shutdown()  # the next run starts a cluster of its own size
        speedups[executor] = times[1] / times[args.workers]
    pool = f"{speedups['pool']:.2f}"
    on_ray = f"{speedups['ray']:.2f}" if "ray" in speedups else "-"
    print(f"scaleout speedup {args.workers} workers: {pool} (pool) {on_ray} (ray)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

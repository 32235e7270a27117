"""Emulator speed: lane-instructions (thread instructions) per second.

Three kernels, each emulated with every block:

* compute-bound: a tiled matrix multiply (shared-memory tiles, FMA inner loop);
* memory-bound: a streaming copy with a scale (one load, one store per element);
* divergent: a loop whose trip count and branch depend on the lane.

Prints a table (best of ``--repeat`` runs, the trace recorded unless ``--no-trace``)
and, last, ``emulator lane-instr/s: <N>``, the mean of the compute- and
memory-bound rates. Run with ``PYTHONPATH=src python benchmarks/emulator_speed.py``;
``--profile`` prints a cProfile of the compute-bound run instead.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kerncast.emu import emulate
from kerncast.frontend import compile as compile_source
from kerncast.ptx import parse

SOURCE = r"""
#define TILE 16
extern "C" __global__ void matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[TILE][TILE];
  __shared__ float tb[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int col = blockIdx.x * TILE + tx, row = blockIdx.y * TILE + ty;
  float acc = 0.0f;
  for (int t = 0; t < n; t += TILE) {
    ta[ty][tx] = a[row * n + t + tx];
    tb[ty][tx] = b[(t + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; k++) acc += ta[ty][k] * tb[k][tx];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

extern "C" __global__ void scale_copy(const float* x, float* y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = s * x[i];
}

extern "C" __global__ void divergent(const int* work, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int trips = work[i];
  float acc = 0.0f;
  for (int k = 0; k < trips; k++) {
    if ((k + threadIdx.x) & 1) acc += sqrtf((float)k);
    else acc -= 0.5f * k;
  }
  out[i] = acc;
}
"""


def _cases(module):
    rng = np.random.default_rng(0)
    n = 256
    a = rng.standard_normal(n * n).astype(np.float32)
    b = rng.standard_normal(n * n).astype(np.float32)
    c = np.zeros(n * n, np.float32)
    m = 1 << 20
    x = rng.standard_normal(m).astype(np.float32)
    y = np.zeros(m, np.float32)
    d = 1 << 15
    work = rng.integers(0, 64, d).astype(np.int32)
    out = np.zeros(d, np.float32)
    return [
        ("compute-bound", "matmul", ((n // 16, n // 16), (16, 16)), [a, b, c, np.int32(n)]),
        ("memory-bound", "scale_copy", ((m // 256,), (256,)), [x, y, np.float32(2.0),
                                                              np.int32(m)]),
        ("divergent", "divergent", ((d // 256,), (256,)), [work, out, np.int32(d)]),
    ]


def measure(module, entry, launch, args, trace: bool) -> tuple[float, int, int]:
    began = time.perf_counter()
    result = emulate(module, launch, args, entry=entry, trace=trace)
    seconds = time.perf_counter() - began
    return seconds, result.thread_steps, result.steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="profile the compute-bound run")
    parser.add_argument("--no-trace", action="store_true", help="emulate without the trace")
    parser.add_argument("--repeat", type=int, default=3, help="runs per kernel (best counts)")
    options = parser.parse_args()
    module = parse(compile_source(SOURCE, lang="cuda").ptx)
    cases = _cases(module)
    if options.profile:
        import cProfile
        import pstats

        _, entry, launch, args = cases[0]
        cProfile.runctx("measure(module, entry, launch, args, True)", globals(), locals(),
                        "/tmp/emu.prof")
        pstats.Stats("/tmp/emu.prof").sort_stats("cumulative").print_stats(30)
        return
    rates = {}
    print(f"{'kernel':15s} {'seconds':>8s} {'warp-instr':>12s} {'lane-instr':>12s} "
          f"{'lane-instr/s':>14s}")
    for label, entry, launch, args in cases:
        runs = [measure(module, entry, launch, args, not options.no_trace)
                for _ in range(max(options.repeat, 1))]
        seconds, lanes, warps = min(runs)
        rates[label] = lanes / seconds
        print(f"{label:15s} {seconds:8.3f} {warps:12,d} {lanes:12,d} {lanes / seconds:14,.0f}")
    regular = (rates["compute-bound"] + rates["memory-bound"]) / 2
    print(f"emulator lane-instr/s: {regular:.0f}")


if __name__ == "__main__":
    main()

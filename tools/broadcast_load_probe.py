"""Where a lone warp's broadcast loads spend their time: corpus ``coulomb_potential`` at size
medium with about one warp per scheduler, its atoms read five ways (on an NVIDIA GPU, CuPy).

    python tools/broadcast_load_probe.py [--device h200]
        [--out data/probes/broadcast-loads-h200.json]

At size medium (256 x 256 lattice points, 1,024 atoms, ``bx=64, by=1, unroll=4``: 512
warps) every warp reads the same 16 KB of atoms, one ``float4`` a step, and the static
model predicts the launch 25% fast: Nsight Compute counts 5.7 cycles of long-scoreboard
stall per issued instruction on an H100. The same launch runs with the atoms read

* ``nc``: as the corpus reads them (``const float4* __restrict__``: ``LDG.E.128.CONSTANT``);
* ``plain``: through a pointer ptxas cannot prove read-only (``LDG.E.128``);
* ``next``: as ``nc``, with the next atom loaded one step ahead (software pipelined);
* ``shared``: copied to shared memory by each block first;
* ``constant``: from ``__constant__`` memory (one address a warp: the constant cache).

It prints each variant's time, and cycles per atom per warp. Nothing is tuned on it: it
says how much of the launch the loads' latency is. ``--out`` keeps the rows with the
device's name and the time of the run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from _gpu_probe import calibration_bench, write_rows

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SOURCE = r"""
#define UNROLL 4
__constant__ float4 c_atoms[1024];

template <typename Load>
__device__ void lattice(Load atom_at, float* grid, int natoms, int gx, int gy, float h,
                        float zslice) {
  int i0 = blockIdx.x * blockDim.x * UNROLL + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i0 >= gx || j >= gy) return;
  float y = h * (float)j;
  float x[UNROLL], e[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    x[u] = h * (float)(i0 + u * (int)blockDim.x);
    e[u] = 0.0f;
  }
  for (int a = 0; a < natoms; a++) {
    float4 atom = atom_at(a);
    float dy = y - atom.y, dz = zslice - atom.z;
    float dyz2 = dy * dy + dz * dz;
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      float dx = x[u] - atom.x;
      e[u] += atom.w * rsqrtf(dx * dx + dyz2);
    }
  }
#pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    int i = i0 + u * blockDim.x;
    if (i < gx) grid[j * gx + i] += e[u];
  }
}

struct FromNc {
  const float4* __restrict__ p;
  __device__ float4 operator()(int a) const { return p[a]; }
};
struct FromPlain {
  const float4* p;
  __device__ float4 operator()(int a) const { return p[a]; }
};
struct FromNcAhead {  // each step's atom loaded the step before
  const float4* __restrict__ p;
  int n;
  float4 ahead;
  __device__ float4 operator()(int a) {
    float4 atom = ahead;
    ahead = p[a + 1 < n ? a + 1 : a];
    return atom;
  }
};
struct FromShared {
  const float4* p;
  __device__ float4 operator()(int a) const { return p[a]; }
};
struct FromConstant {
  __device__ float4 operator()(int a) const { return c_atoms[a]; }
};

extern "C" __global__ void nc(const float4* __restrict__ atoms, float* grid, int natoms,
                              int gx, int gy, float h, float zslice) {
  lattice(FromNc{atoms}, grid, natoms, gx, gy, h, zslice);
}
extern "C" __global__ void plain(const float4* atoms, float* grid, int natoms, int gx, int gy,
                                 float h, float zslice) {
  lattice(FromPlain{atoms}, grid, natoms, gx, gy, h, zslice);
}
extern "C" __global__ void shared(const float4* __restrict__ atoms, float* grid, int natoms,
                                  int gx, int gy, float h, float zslice) {
  __shared__ float4 s_atoms[1024];
  int t = threadIdx.y * blockDim.x + threadIdx.x, n = blockDim.x * blockDim.y;
  for (int a = t; a < natoms; a += n) s_atoms[a] = atoms[a];
  __syncthreads();
  lattice(FromShared{s_atoms}, grid, natoms, gx, gy, h, zslice);
}
extern "C" __global__ void constant(const float4* __restrict__ atoms, float* grid, int natoms,
                                    int gx, int gy, float h, float zslice) {
  lattice(FromConstant{}, grid, natoms, gx, gy, h, zslice);
}
extern "C" __global__ void next(const float4* __restrict__ atoms, float* grid, int natoms,
                                int gx, int gy, float h, float zslice) {
  lattice(FromNcAhead{atoms, natoms, atoms[0]}, grid, natoms, gx, gy, h, zslice);
}
"""
VARIANTS = ("nc", "plain", "next", "shared", "constant")
GX = GY = 256
NATOMS, BX, UNROLL = 1024, 64, 4


def main(argv: list[str] | None = None) -> int:
    bench, out = calibration_bench(__doc__, argv)
    if bench is None:
        return 1
    cp = bench.cp
    module = cp.RawModule(code=SOURCE, options=("-std=c++17",))
    rng = np.random.default_rng(0)
    atoms = rng.uniform(0.0, 64.0, (NATOMS, 4)).astype(np.float32)
    d_atoms = cp.asarray(atoms)
    cp.ndarray((NATOMS, 4), cp.float32, module.get_global("c_atoms"))[...] = d_atoms
    grid = cp.zeros(GX * GY, dtype=cp.float32)
    launch = ((GX // (BX * UNROLL), GY), (BX, 1))
    params = (d_atoms, grid, np.int32(NATOMS), np.int32(GX), np.int32(GY), np.float32(0.5),
              np.float32(32.0))
    warps = launch[0][0] * launch[0][1] * BX // 32
    rows = []
    print(f"{warps} warps on {bench.sms} SMs; variant, µs, cycles per atom per warp")
    for name in VARIANTS:
        fn = module.get_function(name)
        seconds = bench.timed(lambda: fn(*launch, params), reps=20)
        per_atom = seconds * bench.clock_hz / NATOMS
        rows.append({"variant": name, "us": round(seconds * 1e6, 2),
                     "cycles_per_atom": round(per_atom, 1)})
        print(f"{name:9s} {seconds * 1e6:8.2f} {per_atom:7.1f}", flush=True)
    write_rows(out, bench, "python tools/broadcast_load_probe.py", rows, warps=warps)
    return 0


if __name__ == "__main__":
    sys.exit(main())

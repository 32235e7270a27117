"""Probe register-bank conflicts on a GPU: issue rate of FFMA chains by operand registers.

    python tools/register_bank_probe.py --out data/probes/register_banks_h100.json

Each kernel runs dependent FFMA (or FADD) chains, 16 unrolled steps a loop trip, with
4 warps per block (one per scheduler) and 1 to 16 blocks per SM (all resident), and
reports warp instructions issued per cycle per scheduler. The kernels differ in where
the multiplier and the addend live, which decides the registers ptxas gives them:

* ``uniform_ilp{1,2,4,8}``: kernel arguments (a uniform register and one vector
  register: no two vector registers of one bank);
* ``vector_ilp{1,2,4,8}``: values that differ per thread (three vector registers:
  two share a bank unless the reuse cache serves one);
* ``loaded``: corpus arith_mixed's loop (the arguments in R2 and R3, the chain in R4);
* ``fadd_vector``: a dependent FADD of two vector registers;
* ``int_vector``, ``int_uniform``: an integer chain on the ALU pipe (a LOP3 and an
  IADD3 a step, counted as two instructions), its operands per thread or kernel
  arguments.

The SASS of every probe kernel (``cuobjdump -sass``) goes into the output beside its
rates, so that the operands behind each number can be read. Needs CuPy, nvcc,
cuobjdump and NVML; the GPU's clocks are read, never set.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _gpu_probe import SPIN, provenance, sass, timed

SOURCE = r"""
template<int ILP, bool VECTOR> __device__ void chain(float* out, int iters, float m, float c) {
  float a[ILP];
  if (VECTOR) { m += threadIdx.x * 1e-9f; c -= threadIdx.x * 1e-9f; }
#pragma unroll
  for (int j = 0; j < ILP; j++) a[j] = threadIdx.x + j;
  for (int i = 0; i < iters; i++) {
#pragma unroll 16
    for (int k = 0; k < 16; k++)
#pragma unroll
      for (int j = 0; j < ILP; j++) a[j] = a[j] * m + c;
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < ILP; j++) s += a[j];
  if (s == -1.0f) out[0] = s;
}
#define CHAIN(name, ilp, vector) extern "C" __global__ void name(float* o, int it, float m, \
    float c) { chain<ilp, vector>(o, it, m, c); }
CHAIN(uniform_ilp1, 1, false) CHAIN(uniform_ilp2, 2, false) CHAIN(uniform_ilp4, 4, false)
CHAIN(uniform_ilp8, 8, false) CHAIN(vector_ilp1, 1, true) CHAIN(vector_ilp2, 2, true)
CHAIN(vector_ilp4, 4, true) CHAIN(vector_ilp8, 8, true)

extern "C" __global__ void fadd_vector(float* o, int it, float m, float c) {
  float a = threadIdx.x, b = m + threadIdx.x * 1e-9f;
  for (int i = 0; i < it; i++) {
#pragma unroll 16
    for (int k = 0; k < 16; k++) a = a + b;
  }
  if (a == -1.0f) o[0] = a;
}

// integer chains on the ALU pipe, a LOP3 and an IADD3 a step: t = a ^ d, a = a + b + t,
// with b and d per thread (the IADD3 reads three vector registers, two of one bank) or
// kernel arguments (uniform registers)
#define INT_CHAIN(name, B, D) extern "C" __global__ void name(float* o, int it, float m, \
    float c) { \
  unsigned a = threadIdx.x, b = B, d = D; \
  for (int i = 0; i < it; i++) { \
    _Pragma("unroll 16") for (int k = 0; k < 16; k++) a = a + b + (a ^ d); \
  } \
  if (a == 7u) o[0] = a; \
}
INT_CHAIN(int_vector, __float_as_uint(m) + threadIdx.x * 3u, __float_as_uint(c) ^ (threadIdx.x * 5u))
INT_CHAIN(int_uniform, __float_as_uint(m), __float_as_uint(c))

extern "C" __global__ void loaded(const float* x, float* y, int n, int fmas, float m, float c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i];
#pragma unroll 16
  for (int k = 0; k < fmas; k++) a = a * m + c;
  y[i] = a;
}
"""
CHAINS = {f"{kind}_ilp{ilp}": ilp for kind in ("uniform", "vector") for ilp in (1, 2, 4, 8)}
CHAINS.update({"fadd_vector": 1, "int_vector": 2, "int_uniform": 2})
WARPS_PER_SCHEDULER = (1, 2, 4, 8, 16)
ITERS = 1024

METHOD = ("tools/register_bank_probe.py: event-timed launches after a spin kernel, "
          "4 warps a block, all blocks resident")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import cupy as cp
    import pynvml

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    module = cp.RawModule(code=SOURCE + SPIN, options=("-std=c++17",))
    spin = module.get_function("spin")
    sink = cp.zeros(1, cp.float32)
    m, c = np.float32(0.999), np.float32(0.5)
    rows = []

    def record(kernel: str, ilp: int, wps: int, seconds: float, per_warp: int) -> None:
        clock = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
        rate = wps * per_warp / (seconds * clock * 1e6)
        rows.append({"kernel": kernel, "ilp": ilp, "warps_per_scheduler": wps,
                     "seconds": seconds, "sm_clock_mhz": clock,
                     "warp_instructions_per_clk_scheduler": round(rate, 4)})
        print(f"{kernel:14s} warps/scheduler={wps:2d} {rate:.3f} per cycle", flush=True)

    for name, ilp in CHAINS.items():
        kernel = module.get_function(name)
        for wps in WARPS_PER_SCHEDULER:
            seconds = timed(cp, spin, kernel, (sms * wps,), (128,),
                            (sink, np.int32(ITERS), m, c))
            record(name, ilp, wps, seconds, ITERS * 16 * ilp)
    loaded = module.get_function("loaded")
    fmas = 16 * ITERS
    for wps in WARPS_PER_SCHEDULER:
        n = sms * wps * 128
        x, y = cp.ones(n, cp.float32), cp.empty(n, cp.float32)
        seconds = timed(cp, spin, loaded, (sms * wps,), (128,), (x, y, np.int32(n),
                                                                np.int32(fmas), m, c))
        record("loaded", 1, wps, seconds, fmas)
    out = {**provenance(props, pynvml, METHOD),
           "rows": rows, "sass": sass(SOURCE + SPIN)}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()

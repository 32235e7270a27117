// Arithmetic micro-benchmarks. Each thread owns ILP elements (a block's elements are
// interleaved by the block size, so every load and store is coalesced) and runs one
// dependent chain per element, iters steps long: ILP independent chains per thread, the
// same work per element for every ILP. Multipliers and addends are kernel arguments so
// that no chain can be folded at compile time. a * m + c is contracted into one fma by
// nvcc and by clang (OpenCL C allows contraction by default): the PTX has fma.rn.

#ifndef ILP
#define ILP 4
#endif

// fp32: a <- a * m + c (one fma), iters times per element.
extern "C" __global__ void arith_fp32(const float* __restrict__ x, float* __restrict__ y, int n,
                                      int iters, float m, float c) {
  int base = blockIdx.x * blockDim.x * ILP + threadIdx.x;
  float acc[ILP];
#pragma unroll
  for (int j = 0; j < ILP; j++) {
    int e = base + j * blockDim.x;
    acc[j] = e < n ? x[e] : 0.0f;
  }
#pragma unroll 4
  for (int k = 0; k < iters; k++) {
#pragma unroll
    for (int j = 0; j < ILP; j++) acc[j] = acc[j] * m + c;
  }
#pragma unroll
  for (int j = 0; j < ILP; j++) {
    int e = base + j * blockDim.x;
    if (e < n) y[e] = acc[j];
  }
}

// fp64: a <- a * m + c (one fma), iters times per element.
extern "C" __global__ void arith_fp64(const double* __restrict__ x, double* __restrict__ y, int n,
                                      int iters, double m, double c) {
  int base = blockIdx.x * blockDim.x * ILP + threadIdx.x;
  double acc[ILP];
#pragma unroll
  for (int j = 0; j < ILP; j++) {
    int e = base + j * blockDim.x;
    acc[j] = e < n ? x[e] : 0.0;
  }
#pragma unroll 4
  for (int k = 0; k < iters; k++) {
#pragma unroll
    for (int j = 0; j < ILP; j++) acc[j] = acc[j] * m + c;
  }
#pragma unroll
  for (int j = 0; j < ILP; j++) {
    int e = base + j * blockDim.x;
    if (e < n) y[e] = acc[j];
  }
}

// int32: one step is a shift, xor, multiply-add, shift-and-xor and add of a shifted value.
extern "C" __global__ void arith_int32(const unsigned int* __restrict__ x,
                                       unsigned int* __restrict__ y, int n, int iters,
                                       unsigned int mul, unsigned int add) {
  int base = blockIdx.x * blockDim.x * ILP + threadIdx.x;
  unsigned int h[ILP];
#pragma unroll
  for (int j = 0; j < ILP; j++) {
    int e = base + j * blockDim.x;
    h[j] = e < n ? x[e] : 0u;
  }
#pragma unroll 2
  for (int k = 0; k < iters; k++) {
#pragma unroll
    for (int j = 0; j < ILP; j++) {
      unsigned int t = h[j];
      t ^= t >> 7;
      t = t * mul + add;
      t ^= (t << 9) & 0xA5A5A5A5u;
      t += t >> 13;
      h[j] = t;
    }
  }
#pragma unroll
  for (int j = 0; j < ILP; j++) {
    int e = base + j * blockDim.x;
    if (e < n) y[e] = h[j];
  }
}

// Transcendental mix: one step of a contracting map of sin, cos, log, sqrt, rsqrt and exp.
extern "C" __global__ void arith_sfu(const float* __restrict__ x, float* __restrict__ y, int n,
                                     int iters) {
  int base = blockIdx.x * blockDim.x * ILP + threadIdx.x;
  float acc[ILP];
#pragma unroll
  for (int j = 0; j < ILP; j++) {
    int e = base + j * blockDim.x;
    acc[j] = e < n ? x[e] : 0.0f;
  }
  for (int k = 0; k < iters; k++) {
#pragma unroll
    for (int j = 0; j < ILP; j++) {
      float a = acc[j];
      float q = a * a + 1.0f;
      acc[j] = 0.25f * sinf(a) + 0.25f * cosf(a) + 0.125f * logf(q) + 0.125f * sqrtf(q) +
               0.125f * rsqrtf(q) + 0.125f * expf(-a * a);
    }
  }
#pragma unroll
  for (int j = 0; j < ILP; j++) {
    int e = base + j * blockDim.x;
    if (e < n) y[e] = acc[j];
  }
}

// A streamed array with fmas dependent FMAs per element loaded: memory-bound at 1 FMA per
// 8 bytes moved, compute-bound at 1024 (the H100 crossover is near 64).
extern "C" __global__ void arith_mixed(const float* __restrict__ x, float* __restrict__ y, int n,
                                       int fmas, float m, float c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i];
#pragma unroll 16
  for (int k = 0; k < fmas; k++) a = a * m + c;
  y[i] = a;
}

// Memory-access micro-benchmarks: copies that move the same bytes with different patterns.

#ifndef VEC
#define VEC 4
#endif

// Strided reads: row q of the grid (blockIdx.y) gathers every stride-th element starting at
// q, so consecutive threads read addresses stride elements apart and write contiguously.
// Over all rows every element is read once: y viewed as (stride, cols) is the transpose of
// x viewed as (cols, stride).
extern "C" __global__ void copy_strided(const float* __restrict__ x, float* __restrict__ y,
                                        int cols, int stride) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  int q = blockIdx.y;
  if (r < cols) y[q * cols + r] = x[r * stride + q];
}

// Misaligned reads: every warp's reads start offset elements past a 128-byte boundary.
extern "C" __global__ void copy_offset(const float* __restrict__ x, float* __restrict__ y, int n,
                                       int offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i + offset];
}

// Vector width: each thread moves VEC consecutive floats with one load and one store.
#if VEC == 4
typedef float4 vec_t;
#elif VEC == 2
typedef float2 vec_t;
#else
typedef float vec_t;
#endif

extern "C" __global__ void copy_vector(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / VEC) reinterpret_cast<vec_t*>(y)[i] = reinterpret_cast<const vec_t*>(x)[i];
}

// Memory-access micro-benchmarks: copies that move the same bytes with different patterns.

#ifndef VEC
#define VEC 4
#endif

// Strided reads: row q of the grid (group id 1) gathers every stride-th element starting at
// q, so consecutive work-items read addresses stride elements apart and write contiguously.
// Over all rows every element is read once: y viewed as (stride, cols) is the transpose of
// x viewed as (cols, stride).
__kernel void copy_strided(__global const float* restrict x, __global float* restrict y, int cols,
                           int stride) {
  int r = get_group_id(0) * get_local_size(0) + get_local_id(0);
  int q = get_group_id(1);
  if (r < cols) y[q * cols + r] = x[r * stride + q];
}

// Misaligned reads: every warp's reads start offset elements past a 128-byte boundary.
__kernel void copy_offset(__global const float* restrict x, __global float* restrict y, int n,
                          int offset) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) y[i] = x[i + offset];
}

// Vector width: each work-item moves VEC consecutive floats with one load and one store.
#if VEC == 4
typedef float4 vec_t;
#elif VEC == 2
typedef float2 vec_t;
#else
typedef float vec_t;
#endif

__kernel void copy_vector(__global const float* restrict x, __global float* restrict y, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n / VEC) ((__global vec_t*)y)[i] = ((__global const vec_t*)x)[i];
}

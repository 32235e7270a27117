// Dense matrix multiply C = A * B (n x n, row-major, float32): naive and tiled.

__kernel void matmul_naive(__global const float* restrict a, __global const float* restrict b,
                           __global float* restrict c, int n) {
  int col = get_global_id(0);
  int row = get_global_id(1);
  if (row >= n || col >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < n; k++) acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}

#ifndef TILE
#define TILE 16
#endif
#ifndef PAD
#define PAD 0
#endif

__kernel void matmul_tiled(__global const float* restrict a, __global const float* restrict b,
                           __global float* restrict c, int n) {
  __local float ta[TILE][TILE + PAD];
  __local float tb[TILE][TILE + PAD];
  int tx = get_local_id(0), ty = get_local_id(1);
  int col = get_group_id(0) * TILE + tx;
  int row = get_group_id(1) * TILE + ty;
  float acc = 0.0f;
  for (int t = 0; t < n; t += TILE) {
    ta[ty][tx] = (row < n && t + tx < n) ? a[row * n + t + tx] : 0.0f;
    tb[ty][tx] = (col < n && t + ty < n) ? b[(t + ty) * n + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int k = 0; k < TILE; k++) acc += ta[ty][k] * tb[k][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < n && col < n) c[row * n + col] = acc;
}

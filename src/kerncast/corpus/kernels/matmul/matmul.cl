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

#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif
#ifndef RM
#define RM 2
#endif
#ifndef RN
#define RN 2
#endif
#ifndef BK
#define BK 8
#endif
#define BM (BY * RM)
#define BN (BX * RN)

// Register blocking: a BX x BY work-group computes a BM x BN tile of C; each work-item
// keeps an RM x RN block of accumulators, with rows ty + i*BY and columns tx + j*BX.
__kernel void matmul_regblock(__global const float* restrict a, __global const float* restrict b,
                              __global float* restrict c, int n) {
  __local float sa[BK][BM + 1];
  __local float sb[BK][BN];
  int tx = get_local_id(0), ty = get_local_id(1);
  int tid = ty * BX + tx;
  int row0 = get_group_id(1) * BM, col0 = get_group_id(0) * BN;
  float acc[RM][RN];
#pragma unroll
  for (int i = 0; i < RM; i++)
#pragma unroll
    for (int j = 0; j < RN; j++) acc[i][j] = 0.0f;
  for (int t = 0; t < n; t += BK) {
    for (int e = tid; e < BM * BK; e += BX * BY) {
      int m = e / BK, k = e % BK;
      int r = row0 + m, kk = t + k;
      sa[k][m] = (r < n && kk < n) ? a[r * n + kk] : 0.0f;
    }
    for (int e = tid; e < BK * BN; e += BX * BY) {
      int k = e / BN, j = e % BN;
      int cc = col0 + j, kk = t + k;
      sb[k][j] = (cc < n && kk < n) ? b[kk * n + cc] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int k = 0; k < BK; k++) {
      float av[RM], bv[RN];
#pragma unroll
      for (int i = 0; i < RM; i++) av[i] = sa[k][ty + i * BY];
#pragma unroll
      for (int j = 0; j < RN; j++) bv[j] = sb[k][tx + j * BX];
#pragma unroll
      for (int i = 0; i < RM; i++)
#pragma unroll
        for (int j = 0; j < RN; j++) acc[i][j] += av[i] * bv[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#pragma unroll
  for (int i = 0; i < RM; i++) {
    int r = row0 + ty + i * BY;
#pragma unroll
    for (int j = 0; j < RN; j++) {
      int cc = col0 + tx + j * BX;
      if (r < n && cc < n) c[r * n + cc] = acc[i][j];
    }
  }
}

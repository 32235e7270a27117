// Dense matrix multiply C = A * B (n x n, row-major, float32): naive and tiled.

extern "C" __global__ void matmul_naive(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ c, int n) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
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

// Shared-memory tiling: each block stages TILE x TILE tiles of A and B.
extern "C" __global__ void matmul_tiled(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ c, int n) {
  __shared__ float ta[TILE][TILE + PAD];
  __shared__ float tb[TILE][TILE + PAD];
  int tx = threadIdx.x, ty = threadIdx.y;
  int col = blockIdx.x * TILE + tx;
  int row = blockIdx.y * TILE + ty;
  float acc = 0.0f;
  for (int t = 0; t < n; t += TILE) {
    ta[ty][tx] = (row < n && t + tx < n) ? a[row * n + t + tx] : 0.0f;
    tb[ty][tx] = (col < n && t + ty < n) ? b[(t + ty) * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; k++) acc += ta[ty][k] * tb[k][tx];
    __syncthreads();
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

// Register blocking: a BX x BY block computes a BM x BN tile of C; each thread keeps an
// RM x RN block of accumulators, with rows ty + i*BY and columns tx + j*BX (strided, so
// that stores stay coalesced). A (stored k-major, padded) and B are staged BK at a time.
extern "C" __global__ void matmul_regblock(const float* __restrict__ a, const float* __restrict__ b,
                                           float* __restrict__ c, int n) {
  __shared__ float sa[BK][BM + 1];
  __shared__ float sb[BK][BN];
  int tx = threadIdx.x, ty = threadIdx.y;
  int tid = ty * BX + tx;
  int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
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
    __syncthreads();
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
    __syncthreads();
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

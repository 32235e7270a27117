// Tiled matrix product C (M x N) = A (M x K) * B (K x N), all row-major, with TILE x TILE
// work-groups staging tiles of A and B in __local memory. K need not be a multiple of
// TILE: out-of-range tile entries are loaded as zero.
#define TILE 16

__kernel void local_matmul(__global const float* A, __global const float* B,
                           __global float* C, int M, int N, int K) {
  __local float As[TILE][TILE];
  __local float Bs[TILE][TILE];
  int tx = get_local_id(0), ty = get_local_id(1);
  int col = get_group_id(0) * TILE + tx;
  int row = get_group_id(1) * TILE + ty;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TILE; ++k) {
      acc += As[ty][k] * Bs[k][tx];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N) {
    C[row * N + col] = acc;
  }
}

// Pathfinder: dynamic programming over a grid of step costs, advancing the cost row by
// PYR rows per launch. Each block loads BLOCK consecutive costs into shared memory and
// runs PYR steps of cost[c] = wall[c] + min(cost[c-1], cost[c], cost[c+1]); the valid
// region shrinks by one column per side per step (a pyramid), so a block writes its
// BLOCK - 2 * PYR middle columns and neighbouring blocks overlap by 2 * PYR columns.

#ifndef BLOCK
#define BLOCK 256  // threads per block
#endif
#ifndef PYR
#define PYR 16  // rows per launch (pyramid height)
#endif
#define BIG 0x3FFFFFFF  // cost of the virtual columns beyond the edges

extern "C" __global__ void pathfinder_rows(const int* __restrict__ wall,
                                           const int* __restrict__ src, int* __restrict__ dst,
                                           int cols) {
  __shared__ int prev[BLOCK];
  __shared__ int next[BLOCK];
  int tx = threadIdx.x;
  int col = blockIdx.x * (BLOCK - 2 * PYR) - PYR + tx;
  int inside = col >= 0 && col < cols;
  prev[tx] = inside ? src[col] : BIG;
  __syncthreads();
  for (int i = 0; i < PYR; i++) {
    int live = inside && tx >= i + 1 && tx <= BLOCK - 2 - i;
    if (live) {
      int best = min(prev[tx], min(prev[tx - 1], prev[tx + 1]));
      next[tx] = best + wall[i * cols + col];
    }
    __syncthreads();
    if (live) prev[tx] = next[tx];
    __syncthreads();
  }
  if (inside && tx >= PYR && tx < BLOCK - PYR) dst[col] = prev[tx];
}

// Sum reduction, one partial sum per block. A block owns the tile of BLOCK * ITEMS
// consecutive elements starting at blockIdx.x * tile (tile = BLOCK * ITEMS); each thread
// first adds ITEMS of them (BLOCK apart, so the loads are coalesced), then the block
// combines its BLOCK thread sums.

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 4
#endif

__device__ __forceinline__ float thread_sum(const float* __restrict__ x, int n, int tile) {
  int base = blockIdx.x * tile + threadIdx.x;
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    int e = base + k * BLOCK;
    if (e < n) sum += x[e];
  }
  return sum;
}

// Tree in shared memory with sequential addressing: at each level the lower half of the
// active threads adds the upper half (contiguous, conflict-free accesses).
extern "C" __global__ void reduce_tree(const float* __restrict__ x, float* __restrict__ partial,
                                       int n, int tile) {
  __shared__ float s[BLOCK];
  int tid = threadIdx.x;
  s[tid] = thread_sum(x, n, tile);
  __syncthreads();
#pragma unroll
  for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = s[0];
}

// Warp shuffles: each warp folds its 32 sums with shuffle-down, warp 0 folds the warp sums.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

extern "C" __global__ void reduce_shuffle(const float* __restrict__ x, float* __restrict__ partial,
                                          int n, int tile) {
  __shared__ float warp_sums[BLOCK / 32];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float sum = warp_sum(thread_sum(x, n, tile));
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = warp_sum(lane < BLOCK / 32 ? warp_sums[lane] : 0.0f);
    if (lane == 0) partial[blockIdx.x] = sum;
  }
}

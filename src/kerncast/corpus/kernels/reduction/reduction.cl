// Sum reduction, one partial sum per work-group. A group owns the tile of BLOCK * ITEMS
// consecutive elements starting at group_id * tile (tile = BLOCK * ITEMS); each work-item
// first adds ITEMS of them (BLOCK apart, so the loads are coalesced), then the group
// combines its BLOCK sums. (The warp-shuffle variant exists in CUDA only.)

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 4
#endif

// Tree in local memory with sequential addressing: at each level the lower half of the
// active work-items adds the upper half (contiguous, conflict-free accesses).
__kernel void reduce_tree(__global const float* restrict x, __global float* restrict partial,
                          int n, int tile) {
  __local float s[BLOCK];
  int tid = get_local_id(0);
  int base = get_group_id(0) * tile + tid;
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    int e = base + k * BLOCK;
    if (e < n) sum += x[e];
  }
  s[tid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (tid == 0) partial[get_group_id(0)] = s[0];
}

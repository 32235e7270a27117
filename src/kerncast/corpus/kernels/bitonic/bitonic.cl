// Bitonic sorting: a whole network per block in shared memory, and one global step.

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 4
#endif
#ifndef PAIRS
#define PAIRS 1
#endif

#define SEG (BLOCK * ITEMS)

// Sorts each block's segment of SEG = BLOCK * ITEMS keys (starting at block * seg; seg must
// equal SEG) ascending in shared memory with the full bitonic network: every thread does
// ITEMS / 2 compare-exchanges per step. Missing keys past n are padded with the largest key.
__kernel void bitonic_block(__global const uint* restrict keys, __global uint* restrict out,
                            int n, int seg) {
  __local uint s[SEG];
  int tid = get_local_id(0);
  int base = get_group_id(0) * seg;
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    int idx = k * BLOCK + tid;
    s[idx] = base + idx < n ? keys[base + idx] : 0xFFFFFFFFu;
  }
  for (int size = 2; size <= SEG; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
      for (int q = 0; q < ITEMS / 2; q++) {
        int p = q * BLOCK + tid;                // pair index
        int i = 2 * p - (p & (stride - 1));     // lower element of the pair
        uint a = s[i], b = s[i + stride];
        int up = (i & size) == 0;               // direction of this bitonic sequence
        if ((a > b) == up) {
          s[i] = b;
          s[i + stride] = a;
        }
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    int idx = k * BLOCK + tid;
    if (base + idx < n) out[base + idx] = s[idx];
  }
}

// One compare-exchange step (size, stride) of a bitonic sort over the whole array, in place:
// pair p joins elements i = 2p - (p mod stride) and i + stride, ordered ascending where
// (i & size) == 0 and descending elsewhere. Each thread handles PAIRS pairs, a block apart.
__kernel void bitonic_step(__global uint* keys, int n, int size, int stride) {
  int base = get_group_id(0) * get_local_size(0) * PAIRS + get_local_id(0);
#pragma unroll
  for (int q = 0; q < PAIRS; q++) {
    int p = base + q * get_local_size(0);
    if (p < n / 2) {
      int i = 2 * p - (p & (stride - 1));
      uint a = keys[i], b = keys[i + stride];
      int up = (i & size) == 0;
      if ((a > b) == up) {
        keys[i] = b;
        keys[i + stride] = a;
      }
    }
  }
}

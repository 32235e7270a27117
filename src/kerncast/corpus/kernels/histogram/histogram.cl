// 256-bin histogram of an 8-bit image with atomic adds.

#ifndef ITEMS
#define ITEMS 4
#endif

// Every thread bins ITEMS pixels of its block's tile of (block size) * ITEMS pixels, one
// block size apart (coalesced byte loads), straight into the global histogram.
__kernel void histo_global(__global const uchar* restrict img, __global uint* bins, int n) {
  int base = get_group_id(0) * get_local_size(0) * ITEMS + get_local_id(0);
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    int e = base + k * get_local_size(0);
    if (e < n) atomic_add(&bins[img[e]], 1u);
  }
}

// The same pixels, binned into a private shared-memory histogram per block first; the block
// then adds its non-zero bins to the global histogram.
__kernel void histo_shared(__global const uchar* restrict img, __global uint* bins, int n) {
  __local uint local_bins[256];
  for (int b = get_local_id(0); b < 256; b += get_local_size(0)) local_bins[b] = 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
  int base = get_group_id(0) * get_local_size(0) * ITEMS + get_local_id(0);
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    int e = base + k * get_local_size(0);
    if (e < n) atomic_add(&local_bins[img[e]], 1u);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int b = get_local_id(0); b < 256; b += get_local_size(0)) {
    uint count = local_bins[b];
    if (count != 0u) atomic_add(&bins[b], count);
  }
}

// One pass of a least-significant-digit radix sort on 4-bit digits: per-block digit
// counts, and the stable scatter of each block's keys given the global offsets.

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 4
#endif
#ifndef RANK_ITEMS
#define RANK_ITEMS 2
#endif

#define TILE (BLOCK * RANK_ITEMS)
#define DIGIT(key) (((key) >> shift) & 15u)

// Per-block counts of one 4-bit digit ((key >> shift) & 15) over the block's tile of
// BLOCK * ITEMS keys (starting at block * tile; tile must equal BLOCK * ITEMS). Each warp counts into its own
// 16 shared counters with shared atomics; the block's 16 sums are written digit-major,
// counts[digit * nblocks + block], the layout whose exclusive scan gives scatter offsets.
__kernel void radix_digit_count(__global const uint* restrict keys, __global uint* restrict counts,
                                int n, int shift, int tile, int nblocks) {
  __local uint warp_counts[(BLOCK / 32) * 16];
  int tid = get_local_id(0);
  for (int j = tid; j < (BLOCK / 32) * 16; j += BLOCK) warp_counts[j] = 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
  int base = get_group_id(0) * tile + tid;
  __local uint* mine = warp_counts + (tid / 32) * 16;
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    int e = base + k * BLOCK;
    if (e < n) atomic_add(&mine[DIGIT(keys[e])], 1u);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (tid < 16) {
    uint sum = 0u;
    for (int w = 0; w < BLOCK / 32; w++) sum += warp_counts[w * 16 + tid];
    counts[tid * nblocks + get_group_id(0)] = sum;
  }
}

// Exclusive scan of one value per thread over the block (Hillis-Steele in shared memory);
// *total receives the block's sum.
uint block_exclusive_scan(__local uint* buf, uint value, uint* total) {
  int tid = get_local_id(0);
  buf[tid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int offset = 1; offset < BLOCK; offset <<= 1) {
    uint left = tid >= offset ? buf[tid - offset] : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    buf[tid] += left;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  *total = buf[BLOCK - 1];
  return buf[tid] - value;
}

// One pass of an LSD radix sort. The block's tile of TILE = BLOCK * RANK_ITEMS keys starts at
// block * tile (tile must equal TILE). The block sorts it stably by the digit with four 1-bit
// split passes in shared memory (each thread owns RANK_ITEMS consecutive keys), finds where
// each digit starts in the sorted tile, and writes every key to
// offsets[digit * nblocks + block] + (its rank among the tile's keys of that digit).
__kernel void radix_scatter(__global const uint* restrict keys,
                            __global const uint* restrict offsets, __global uint* restrict out,
                            int n, int shift, int tile, int nblocks) {
  __local uint s_keys[TILE];
  __local uint s_scan[BLOCK];
  __local uint s_start[16];
  int tid = get_local_id(0);
  int base = get_group_id(0) * tile;
  int valid = min(TILE, n - base);
#pragma unroll
  for (int k = 0; k < RANK_ITEMS; k++) {  // coalesced load; padding sorts last (digit 15, stable)
    int idx = k * BLOCK + tid;
    s_keys[idx] = idx < valid ? keys[base + idx] : 0xFFFFFFFFu;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  uint v[RANK_ITEMS];
#pragma unroll
  for (int k = 0; k < RANK_ITEMS; k++) v[k] = s_keys[tid * RANK_ITEMS + k];
  for (int bit = 0; bit < 4; bit++) {
    uint zeros = 0u;
#pragma unroll
    for (int k = 0; k < RANK_ITEMS; k++) zeros += ((v[k] >> (shift + bit)) & 1u) ^ 1u;
    uint total_zeros;
    uint zero_pos = block_exclusive_scan(s_scan, zeros, &total_zeros);
    uint one_pos = total_zeros + (uint)(tid * RANK_ITEMS) - zero_pos;
#pragma unroll
    for (int k = 0; k < RANK_ITEMS; k++) {
      if ((v[k] >> (shift + bit)) & 1u) s_keys[one_pos++] = v[k];
      else s_keys[zero_pos++] = v[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int k = 0; k < RANK_ITEMS; k++) v[k] = s_keys[tid * RANK_ITEMS + k];
  }
#pragma unroll
  for (int k = 0; k < RANK_ITEMS; k++) {
    int p = tid * RANK_ITEMS + k;
    uint d = DIGIT(v[k]);
    if (p == 0 || DIGIT(s_keys[p - 1]) != d) s_start[d] = (uint)p;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int k = 0; k < RANK_ITEMS; k++) {
    int p = k * BLOCK + tid;
    if (p < valid) {
      uint key = s_keys[p];
      uint d = DIGIT(key);
      out[offsets[d * nblocks + get_group_id(0)] + ((uint)p - s_start[d])] = key;
    }
  }
}

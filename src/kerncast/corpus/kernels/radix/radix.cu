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
extern "C" __global__ void radix_digit_count(const unsigned int* __restrict__ keys,
                                             unsigned int* __restrict__ counts, int n, int shift,
                                             int tile, int nblocks) {
  __shared__ unsigned int warp_counts[(BLOCK / 32) * 16];
  int tid = threadIdx.x;
  for (int j = tid; j < (BLOCK / 32) * 16; j += BLOCK) warp_counts[j] = 0u;
  __syncthreads();
  int base = blockIdx.x * tile + tid;
  unsigned int* mine = warp_counts + (tid / 32) * 16;
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    int e = base + k * BLOCK;
    if (e < n) atomicAdd(&mine[DIGIT(keys[e])], 1u);
  }
  __syncthreads();
  if (tid < 16) {
    unsigned int sum = 0u;
    for (int w = 0; w < BLOCK / 32; w++) sum += warp_counts[w * 16 + tid];
    counts[tid * nblocks + blockIdx.x] = sum;
  }
}

// Exclusive scan of one value per thread over the block (Hillis-Steele in shared memory);
// *total receives the block's sum.
__device__ __forceinline__ unsigned int block_exclusive_scan(unsigned int* buf, unsigned int value,
                                                             unsigned int* total) {
  int tid = threadIdx.x;
  buf[tid] = value;
  __syncthreads();
  for (int offset = 1; offset < BLOCK; offset <<= 1) {
    unsigned int left = tid >= offset ? buf[tid - offset] : 0u;
    __syncthreads();
    buf[tid] += left;
    __syncthreads();
  }
  *total = buf[BLOCK - 1];
  return buf[tid] - value;
}

// One pass of an LSD radix sort. The block's tile of TILE = BLOCK * RANK_ITEMS keys starts at
// block * tile (tile must equal TILE). The block sorts it stably by the digit with four 1-bit
// split passes in shared memory (each thread owns RANK_ITEMS consecutive keys), finds where
// each digit starts in the sorted tile, and writes every key to
// offsets[digit * nblocks + block] + (its rank among the tile's keys of that digit).
extern "C" __global__ void radix_scatter(const unsigned int* __restrict__ keys,
                                         const unsigned int* __restrict__ offsets,
                                         unsigned int* __restrict__ out, int n, int shift, int tile,
                                         int nblocks) {
  __shared__ unsigned int s_keys[TILE];
  __shared__ unsigned int s_scan[BLOCK];
  __shared__ unsigned int s_start[16];
  int tid = threadIdx.x;
  int base = blockIdx.x * tile;
  int valid = min(TILE, n - base);
#pragma unroll
  for (int k = 0; k < RANK_ITEMS; k++) {  // coalesced load; padding sorts last (digit 15, stable)
    int idx = k * BLOCK + tid;
    s_keys[idx] = idx < valid ? keys[base + idx] : 0xFFFFFFFFu;
  }
  __syncthreads();
  unsigned int v[RANK_ITEMS];
#pragma unroll
  for (int k = 0; k < RANK_ITEMS; k++) v[k] = s_keys[tid * RANK_ITEMS + k];
  for (int bit = 0; bit < 4; bit++) {
    unsigned int zeros = 0u;
#pragma unroll
    for (int k = 0; k < RANK_ITEMS; k++) zeros += ((v[k] >> (shift + bit)) & 1u) ^ 1u;
    unsigned int total_zeros;
    unsigned int zero_pos = block_exclusive_scan(s_scan, zeros, &total_zeros);
    unsigned int one_pos = total_zeros + (unsigned int)(tid * RANK_ITEMS) - zero_pos;
#pragma unroll
    for (int k = 0; k < RANK_ITEMS; k++) {
      if ((v[k] >> (shift + bit)) & 1u) s_keys[one_pos++] = v[k];
      else s_keys[zero_pos++] = v[k];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < RANK_ITEMS; k++) v[k] = s_keys[tid * RANK_ITEMS + k];
  }
#pragma unroll
  for (int k = 0; k < RANK_ITEMS; k++) {
    int p = tid * RANK_ITEMS + k;
    unsigned int d = DIGIT(v[k]);
    if (p == 0 || DIGIT(s_keys[p - 1]) != d) s_start[d] = (unsigned int)p;
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < RANK_ITEMS; k++) {
    int p = k * BLOCK + tid;
    if (p < valid) {
      unsigned int key = s_keys[p];
      unsigned int d = DIGIT(key);
      out[offsets[d * nblocks + blockIdx.x] + ((unsigned int)p - s_start[d])] = key;
    }
  }
}

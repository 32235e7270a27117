// Work-efficient (up-sweep / down-sweep) inclusive scan of independent per-block segments.

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 4
#endif
#ifndef PAD
#define PAD 0
#endif

#define SEG (BLOCK * ITEMS)
#if PAD
#define SIDX(i) ((i) + ((i) >> 5))  // one padding word per 32: strided accesses spread over banks
#else
#define SIDX(i) (i)
#endif

// Inclusive scan of each block's segment of SEG = BLOCK * ITEMS consecutive elements (the
// segment starts at block * seg; seg must equal BLOCK * ITEMS).
extern "C" __global__ void scan_block(const int* __restrict__ x, int* __restrict__ y, int n,
                                      int seg) {
  __shared__ int s[SEG + PAD * (SEG / 32)];
  int tid = threadIdx.x;
  int base = blockIdx.x * seg;
  int v[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    int idx = k * BLOCK + tid;
    v[k] = base + idx < n ? x[base + idx] : 0;
    s[SIDX(idx)] = v[k];
  }
  // Up-sweep: build partial sums in place; s[SEG - 1] ends up holding the segment total.
  int offset = 1;
  for (int d = SEG >> 1; d > 0; d >>= 1) {
    __syncthreads();
    for (int p = tid; p < d; p += BLOCK) {
      int ai = offset * (2 * p + 1) - 1, bi = offset * (2 * p + 2) - 1;
      s[SIDX(bi)] += s[SIDX(ai)];
    }
    offset <<= 1;
  }
  if (tid == 0) s[SIDX(SEG - 1)] = 0;
  // Down-sweep: push the prefixes back down the tree; s becomes the exclusive scan.
  for (int d = 1; d < SEG; d <<= 1) {
    offset >>= 1;
    __syncthreads();
    for (int p = tid; p < d; p += BLOCK) {
      int ai = offset * (2 * p + 1) - 1, bi = offset * (2 * p + 2) - 1;
      int t = s[SIDX(ai)];
      s[SIDX(ai)] = s[SIDX(bi)];
      s[SIDX(bi)] += t;
    }
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    int idx = k * BLOCK + tid;
    if (base + idx < n) y[base + idx] = s[SIDX(idx)] + v[k];  // inclusive = exclusive + own
  }
}

// 256-bin histogram of an 8-bit image with atomic adds.

#ifndef ITEMS
#define ITEMS 4
#endif

// Every thread bins ITEMS pixels of its block's tile of (block size) * ITEMS pixels, one
// block size apart (coalesced byte loads), straight into the global histogram.
extern "C" __global__ void histo_global(const unsigned char* __restrict__ img, unsigned int* bins,
                                        int n) {
  int base = blockIdx.x * blockDim.x * ITEMS + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    int e = base + k * blockDim.x;
    if (e < n) atomicAdd(&bins[img[e]], 1u);
  }
}

// The same pixels, binned into a private shared-memory histogram per block first; the block
// then adds its non-zero bins to the global histogram.
extern "C" __global__ void histo_shared(const unsigned char* __restrict__ img, unsigned int* bins,
                                        int n) {
  __shared__ unsigned int local_bins[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local_bins[b] = 0u;
  __syncthreads();
  int base = blockIdx.x * blockDim.x * ITEMS + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS; k++) {
    int e = base + k * blockDim.x;
    if (e < n) atomicAdd(&local_bins[img[e]], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x) {
    unsigned int count = local_bins[b];
    if (count != 0u) atomicAdd(&bins[b], count);
  }
}

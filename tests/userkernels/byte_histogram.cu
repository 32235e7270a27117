// A 256-bin histogram of bytes: each block counts its grid-stride share into a shared
// histogram with shared-memory atomics, then adds its bins to the global histogram.
extern "C" __global__ void byte_histogram(const unsigned char* __restrict__ data, int n,
                                          unsigned int* __restrict__ bins) {
  __shared__ unsigned int local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(&local[data[i]], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x) {
    if (local[b] != 0) atomicAdd(&bins[b], local[b]);
  }
}

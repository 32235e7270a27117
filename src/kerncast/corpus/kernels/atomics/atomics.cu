// Atomic-contention micro-benchmark: every thread adds 1 to bin (key & (nbins - 1)) of a
// global array with an atomic add. With uniform random keys, nbins sets the contention:
// one bin serialises every update on one address, a million bins spread them over 4 MB.

extern "C" __global__ void atomic_contention(const unsigned int* __restrict__ keys, int* bins,
                                             int n, int nbins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[keys[i] & (unsigned int)(nbins - 1)], 1);
}

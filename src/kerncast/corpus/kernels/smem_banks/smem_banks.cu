// Shared-memory bank-conflict micro-benchmark.
//
// Each block copies a table of WORDS 32-bit words into shared memory, then every thread
// sums iters words starting at word (i * stride) mod WORDS and walking forward one word
// per step. The 32 lanes of a warp are stride words apart at every step, so each warp
// load meets gcd(stride, 32)-way bank conflicts (32 banks of 4-byte words): stride 1 or 3
// is conflict-free, stride 32 puts all 32 lanes on one bank.

#ifndef WORDS
#define WORDS 2048
#endif

extern "C" __global__ void smem_bank_stride(const unsigned int* __restrict__ table,
                                            unsigned int* __restrict__ y, int n, int iters,
                                            int stride) {
  __shared__ unsigned int buf[WORDS];
  for (int j = threadIdx.x; j < WORDS; j += blockDim.x) buf[j] = table[j];
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int start = (unsigned int)i * (unsigned int)stride;
  unsigned int acc = 0u;
#pragma unroll 4
  for (int k = 0; k < iters; k++) acc += buf[(start + (unsigned int)k) & (WORDS - 1)];
  if (i < n) y[i] = acc;
}

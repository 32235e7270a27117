// Shared-memory bank-conflict micro-benchmark.
//
// Each work-group copies a table of WORDS 32-bit words into local memory, then every
// work-item sums iters words starting at word (i * stride) mod WORDS and walking forward
// one word per step. The 32 lanes of a warp are stride words apart at every step, so each
// warp load meets gcd(stride, 32)-way bank conflicts (32 banks of 4-byte words): stride 1
// or 3 is conflict-free, stride 32 puts all 32 lanes on one bank.

#ifndef WORDS
#define WORDS 2048
#endif

__kernel void smem_bank_stride(__global const uint* restrict table, __global uint* restrict y,
                               int n, int iters, int stride) {
  __local uint buf[WORDS];
  for (int j = get_local_id(0); j < WORDS; j += get_local_size(0)) buf[j] = table[j];
  barrier(CLK_LOCAL_MEM_FENCE);
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  uint start = (uint)i * (uint)stride;
  uint acc = 0u;
#pragma unroll 4
  for (int k = 0; k < iters; k++) acc += buf[(start + (uint)k) & (WORDS - 1)];
  if (i < n) y[i] = acc;
}

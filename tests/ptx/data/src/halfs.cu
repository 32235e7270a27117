// Half-precision, conversions and integer intrinsics.
#include <cuda_fp16.h>

extern "C" __global__ void half_math(const __half2* a, const __half2* b, __half2* c, float* f, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  __half2 x = __hfma2(a[tid], b[tid], __float2half2_rn(1.0f));
  c[tid] = __hmul2(x, x);
  f[tid] = __half2float(__low2half(x)) + __half2float(__high2half(x));
}

extern "C" __global__ void int_intrinsics(const unsigned* a, unsigned* out, long long* l, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  unsigned v = a[tid];
  out[tid] = __popc(v) + __clz(v) + __brev(v) + __ffs(v) + __byte_perm(v, v, 0x0123)
           + __funnelshift_l(v, v, 5) + __umulhi(v, 77u) + __sad(v, 3u, 1u) + (v >> (tid & 31));
  l[tid] = __mul64hi(l[tid], 99LL) + (long long)__float2int_rn((float)v) + __double2ll_rz((double)v);
  unsigned short s = (unsigned short)v;
  out[tid] += (unsigned)(signed char)(v >> 8) + s / 3;
}

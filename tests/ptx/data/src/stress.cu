// Stress kernels for the PTX parser: the constructs nvcc emits for real code.
#include <cstdint>
#include <cstdio>

__constant__ float c_coeffs[16];
__constant__ int c_table[4] = {1, 2, 3, 4};
__device__ unsigned int d_counter;
__device__ float d_lookup[8] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f};

template <typename T, int N>
__global__ void saxpy_unrolled(T* __restrict__ y, const T* __restrict__ x, T a, int n) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * N;
#pragma unroll
  for (int i = 0; i < N; i++) {
    int j = base + i;
    if (j < n) y[j] = a * x[j] + y[j];
  }
}
template __global__ void saxpy_unrolled<float, 4>(float*, const float*, float, int);
template __global__ void saxpy_unrolled<double, 2>(double*, const double*, double, int);
template __global__ void saxpy_unrolled<int, 8>(int*, const int*, int, int);

__device__ __noinline__ float poly(float x, int k) {
  float acc = 0.0f;
  for (int i = 0; i < k; i++) acc = acc * x + c_coeffs[i & 15];
  return acc;
}

__device__ __noinline__ void swap_pair(int2* p) {
  int t = p->x;
  p->x = p->y;
  p->y = t;
}

extern "C" __global__ void warp_ops(const int* in, int* out, unsigned* masks, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  int v = tid < n ? in[tid] : 0;
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  int up = __shfl_up_sync(0xffffffffu, v, 1);
  int x = __shfl_xor_sync(0xffffffffu, v, 3);
  int idx = __shfl_sync(0xffffffffu, v, 0);
  unsigned ballot = __ballot_sync(0xffffffffu, v > 0);
  unsigned any = __any_sync(0xffffffffu, v < 0);
  unsigned all = __all_sync(0xffffffffu, v != 0);
  unsigned match = __match_any_sync(0xffffffffu, v & 7);
  unsigned active = __activemask();
  __syncwarp();
  if (tid < n) {
    out[tid] = v + up + x + idx;
    masks[tid] = ballot ^ match ^ active ^ any ^ all;
  }
}

extern "C" __global__ void atomics(int* ic, unsigned long long* lc, float* fc, double* dc,
                                   int* imin, int* iexch, const int* in, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  int v = in[tid];
  atomicAdd(ic, v);
  atomicAdd(lc, (unsigned long long)v);
  atomicAdd(fc, (float)v * 0.5f);
  atomicAdd(dc, (double)v * 0.25);
  atomicMin(imin, v);
  atomicMax(imin + 1, v);
  int old = atomicExch(iexch, v);
  int expected = old;
  while (true) {
    int got = atomicCAS(iexch + 1, expected, expected + v);
    if (got == expected) break;
    expected = got;
  }
  atomicInc(&d_counter, 1024u);
  atomicOr(ic + 1, v);
  atomicAnd(ic + 2, v);
  atomicXor(ic + 3, v);
  __shared__ int s_hist[32];
  if (threadIdx.x < 32) s_hist[threadIdx.x] = 0;
  __syncthreads();
  atomicAdd(&s_hist[v & 31], 1);
  __syncthreads();
  if (threadIdx.x < 32) atomicAdd(ic + 4 + threadIdx.x, s_hist[threadIdx.x]);
}

extern "C" __global__ void vectors(const float4* a, const int2* b, float4* out, int2* bout,
                                   long long* big, double* d, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  float4 v = a[tid];
  int2 w = b[tid];
  swap_pair(&w);
  v.x = poly(v.x, w.x & 7);
  v.y = sqrtf(v.y) + rsqrtf(v.z + 1.0f);
  v.z = __sinf(v.z) + __cosf(v.w) + __expf(v.x) + __logf(fabsf(v.y) + 1.0f);
  v.w = v.w / (v.x + 2.0f) + sinf(v.w) + d_lookup[tid & 7];
  out[tid] = v;
  bout[tid] = w;
  long long q = big[tid];
  q = q * 1103515245LL + 12345LL;
  q ^= (q >> 17);
  q = q / 7 + q % 13;
  big[tid] = q + c_table[tid & 3];
  double x = d[tid];
  d[tid] = sqrt(x) / (x + 1.0) + exp(x) - fma(x, x, 3.0);
}

#define TILE 16
extern "C" __global__ void transpose_shared(const float* in, float* out, int w, int h) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = in[y * w + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  if (x < h && y < w) out[y * h + x] = tile[threadIdx.x][threadIdx.y];
}

extern "C" __global__ void dynamic_shared_reduce(const float* in, float* out, int n) {
  extern __shared__ float sdata[];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
  float s = 0.0f;
  if (i < n) s = in[i];
  if (i + blockDim.x < n) s += in[i + blockDim.x];
  sdata[tid] = s;
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 32; k >>= 1) {
    if (tid < k) sdata[tid] = s = s + sdata[tid + k];
    __syncthreads();
  }
  if (tid < 32) {
    for (int off = 32; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
  }
  if (tid == 0) out[blockIdx.x] = s;
}

extern "C" __global__ void inline_asm(const unsigned* in, unsigned* out, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  unsigned v = in[tid], r, lane, lo, hi;
  asm volatile("{\n\t.reg .u32 t1;\n\tmul.lo.u32 t1, %1, 3;\n\tadd.u32 %0, t1, 7;\n\t}"
               : "=r"(r) : "r"(v));
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\tselp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(lo) : "r"(v & 1));
  asm volatile("{\n\t.reg .pred p;\n\tsetp.gt.u32 p, %1, 100;\n\t@p add.u32 %0, %1, 1;\n\t@!p sub.u32 %0, %1, 1;\n\t}"
               : "=r"(hi) : "r"(v));
  unsigned long long clk;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(clk));
  out[tid] = r + lane + lo + hi + (unsigned)(clk & 1);
}

extern "C" __global__ void branches(const int* in, int* out, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  int v = in[tid];
  int r;
  switch (v & 7) {
    case 0: r = v * 3; break;
    case 1: r = v - 11; break;
    case 2: r = v << 2; break;
    case 3: r = v ^ 0x55; break;
    case 5: r = -v; break;
    default: r = 0;
  }
  for (int i = 0; i < (v & 15); i++) {
    if (r > 1000) break;
    for (int j = 0; j < i; j++) r += j * i;
  }
  out[tid] = r;
}

extern "C" __global__ void with_printf(const int* in, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid == 0) printf("n=%d first=%d\n", n, in[0]);
}

extern "C" __global__ void __launch_bounds__(256, 2) bounded(float* x, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n) x[tid] = __fdividef(x[tid], 3.0f) + __int_as_float(0x7f800000) * 0.0f;
}

typedef float (*unary_fn)(float);
__device__ __noinline__ float twice(float x) { return 2.0f * x; }
__device__ __noinline__ float square(float x) { return x * x; }
__device__ unary_fn d_fns[2] = {twice, square};

extern "C" __global__ void indirect_calls(float* x, int which, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n) x[tid] = d_fns[(which + tid) & 1](x[tid]);
}

// Kernels for the emulator's tests (compiled with nvcc -ptx -arch=sm_90).

extern "C" __global__ void if_else(const int* in, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  if (threadIdx.x & 1) {
    for (int k = 0; k < (v & 7); k++) v = v * 3 + k;
  } else {
    v = v - 7;
    out[i + gridDim.x * blockDim.x] = v;
  }
  out[i] = v;
}

extern "C" __global__ void nested_break(const int* limit, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int acc = 0;
  for (int a = 0; a < limit[i]; a++) {
    for (int b = 0; b < 8; b++) {
      if (b * a > limit[i]) break;
      acc += a ^ b;
    }
    if (acc > 100) break;
  }
  out[i] = acc;
}

extern "C" __global__ void block_sum(const float* in, float* out) {
  __shared__ float buf[256];
  int t = threadIdx.x;
  buf[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = buf[0];
}

extern "C" __global__ void sync_count(const int* in, int* out) {
  int t = threadIdx.x;
  int n = __syncthreads_count(in[t] > 0);
  int all = __syncthreads_and(in[t] > -1000);
  int any = __syncthreads_or(in[t] > 1000);
  if (t == 0) { out[0] = n; out[1] = all; out[2] = any; }
}

extern "C" __global__ void early_exit_barrier(const int* in, int* out, int n) {
  __shared__ int total;
  int t = threadIdx.x;
  if (t == 0) total = 0;
  __syncthreads();
  if (t >= n) return;
  atomicAdd(&total, in[t]);
  __syncthreads();
  if (t == 0) out[blockIdx.x] = total;
}

__device__ __noinline__ float poly(float x, const float* coef, int n) {
  float acc = 0.0f;
  for (int k = n - 1; k >= 0; k--) acc = acc * x + coef[k];
  return acc;
}

extern "C" __global__ void calls(const float* x, const float* coef, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = poly(x[i], coef, n) + poly(-x[i], coef, n);
}

__device__ __noinline__ void accumulate(float* where, float v) { *where += v; }

extern "C" __global__ void generic_pointers(const float* x, float* out) {
  __shared__ float s[128];
  float local[4];
  int t = threadIdx.x;
  s[t] = 0.0f;
  for (int k = 0; k < 4; k++) local[k] = x[t] * k;
  accumulate(&s[t], x[t]);
  accumulate(&out[t], 2.0f * x[t]);
  accumulate(&local[t & 3], 1.0f);
  out[t] += s[t] + local[t & 3];
}

extern "C" __global__ void local_array(const int* idx, int* out) {
  int t = threadIdx.x;
  int table[24];
  for (int k = 0; k < 24; k++) table[k] = k * k + t;
  out[t] = table[idx[t] % 24] + table[(idx[t] + 5) % 24];
}

extern "C" __global__ void atomics(int* counter, int* tickets, float* fsum, int* bins,
                                   unsigned* wrap, int* mx, const int* in) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tickets[i] = atomicAdd(counter, 1);
  atomicAdd(fsum, 0.5f);
  atomicAdd(&bins[in[i] & 7], 1);
  atomicInc(wrap, 9u);
  atomicMax(mx, in[i]);
  atomicMin(mx + 1, in[i]);
}

extern "C" __global__ void cas_max(int* value, const int* in) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int old = *value, seen;
  do {
    seen = old;
    if (seen >= in[i]) break;
    old = atomicCAS(value, seen, in[i]);
  } while (old != seen);
}

extern "C" __global__ void shared_histogram(const int* in, int* out) {
  __shared__ int h[16];
  int t = threadIdx.x;
  if (t < 16) h[t] = 0;
  __syncthreads();
  atomicAdd(&h[in[blockIdx.x * blockDim.x + t] & 15], 1);
  __syncthreads();
  if (t < 16) atomicAdd(&out[t], h[t]);
}

extern "C" __global__ void shuffles(const int* in, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  out[6 * i + 0] = __shfl_down_sync(0xffffffff, v, 3);
  out[6 * i + 1] = __shfl_up_sync(0xffffffff, v, 5, 16);
  out[6 * i + 2] = __shfl_xor_sync(0xffffffff, v, 9);
  out[6 * i + 3] = __shfl_sync(0xffffffff, v, 7, 8);
  out[6 * i + 4] = __ballot_sync(0xffffffff, v & 1);
  out[6 * i + 5] = __all_sync(0xffffffff, v > 0) + 2 * __any_sync(0xffffffff, v > 90);
}

extern "C" __global__ void warp_misc(const int* in, unsigned* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  out[4 * i + 0] = __match_any_sync(0xffffffff, v & 3);
  int pred;
  out[4 * i + 1] = __match_all_sync(0xffffffff, v & 0, &pred) ^ (pred << 4);
  out[4 * i + 2] = __reduce_add_sync(0xffffffff, v);
  unsigned active = 0;
  if (threadIdx.x & 2) active = __activemask();
  out[4 * i + 3] = active;
}

extern "C" __global__ void warp_sum(const float* in, float* out) {
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  if ((threadIdx.x & 31) == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}

__constant__ float weights[4] = {0.5f, 0.25f, 2.0f, -1.0f};
__device__ int launches = 41;

extern "C" __global__ void vectors_const(const float4* in, float2* out, int* counter) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 v = in[i];
  out[i] = make_float2(v.x * weights[0] + v.y * weights[1], v.z * weights[2] + v.w * weights[3]);
  if (i == 0) atomicAdd(&launches, 1);
  if (i == 0) *counter = launches;
}

extern "C" __global__ void dynamic_shared(const int* in, int* out) {
  extern __shared__ int buf[];
  int t = threadIdx.x;
  buf[t] = in[t];
  __syncthreads();
  out[t] = buf[blockDim.x - 1 - t];
}

extern "C" __global__ void oob(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i + n];
}

extern "C" __global__ void spin(int* flag) {
  while (*(volatile int*)flag == 0) { }
}

extern "C" __global__ void grid3d(int* out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  int w = gridDim.x * blockDim.x, h = gridDim.y * blockDim.y;
  out[(z * h + y) * w + x] = x + 100 * y + 10000 * z + 1000000 * (threadIdx.x & 31);
}

__device__ int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }

extern "C" __global__ void recursive(int* out) { out[threadIdx.x] = fact(threadIdx.x); }

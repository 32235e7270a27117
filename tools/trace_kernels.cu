// Micro-kernels whose memory counters are known by hand, for checking the emulator's
// trace analyses against Nsight Compute (tools/trace_counters.py).

extern "C" __global__ void gload32(const int* src, int* dst, int stride, int offset) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  dst[i] = src[i * stride + offset];
}

extern "C" __global__ void gload64(const long long* src, long long* dst, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  dst[i] = src[i * stride];
}

extern "C" __global__ void gload128(const int4* src, int4* dst, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  dst[i] = src[i * stride];
}

extern "C" __global__ void shared32(int* dst, int stride) {
  __shared__ int buf[32 * 33 * 4];
  int t = threadIdx.x;
  buf[(t * stride) % (32 * 33 * 4)] = t;
  __syncthreads();
  dst[blockIdx.x * blockDim.x + t] = buf[(t * stride) % (32 * 33 * 4)];
}

extern "C" __global__ void shared64(long long* dst, int stride) {
  __shared__ long long buf[32 * 33 * 2];
  int t = threadIdx.x;
  buf[(t * stride) % (32 * 33 * 2)] = t;
  __syncthreads();
  dst[blockIdx.x * blockDim.x + t] = buf[(t * stride) % (32 * 33 * 2)];
}

extern "C" __global__ void shared128(int4* dst, int stride) {
  __shared__ int4 buf[32 * 33];
  int t = threadIdx.x;
  buf[(t * stride) % (32 * 33)] = make_int4(t, t, t, t);
  __syncthreads();
  dst[blockIdx.x * blockDim.x + t] = buf[(t * stride) % (32 * 33)];
}

extern "C" __global__ void localmem(const int* idx, int* dst) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int table[32];
  for (int k = 0; k < 32; k++) table[k] = k * t;
  dst[t] = table[idx[t] & 31];
}

extern "C" __global__ void atomic_one(int* counter, float* sum) {
  atomicAdd(counter, 1);
  atomicAdd(sum, 1.0f);
}

extern "C" __global__ void atomic_spread(int* bins, const int* keys) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int old = atomicAdd(&bins[keys[i]], 1);
  if (old < 0) bins[0] = old;
}

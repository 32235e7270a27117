// Per-block sum and arg-max of a float array, in one pass. Each thread folds a
// grid-stride run of elements, then the block reduces in dynamic shared memory laid out
// as three arrays of blockDim.x entries: partial sums, running maxima, their indices.
// Ties on the maximum go to the smaller index, so the result is deterministic.
extern "C" __global__ void block_sum_argmax(const float* __restrict__ in, int n,
                                            float* __restrict__ block_sum,
                                            int* __restrict__ block_argmax) {
  extern __shared__ unsigned char smem[];
  float* sums = reinterpret_cast<float*>(smem);
  float* maxv = sums + blockDim.x;
  int* maxi = reinterpret_cast<int*>(maxv + blockDim.x);

  float s = 0.0f;
  float m = -3.402823466e38f;
  int mi = 0x7fffffff;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float v = in[i];
    s += v;
    if (v > m) {  // i grows, so an equal value later never replaces the first
      m = v;
      mi = i;
    }
  }
  sums[threadIdx.x] = s;
  maxv[threadIdx.x] = m;
  maxi[threadIdx.x] = mi;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) {
      unsigned o = threadIdx.x + stride;
      sums[threadIdx.x] += sums[o];
      float a = maxv[threadIdx.x], b = maxv[o];
      if (b > a || (b == a && maxi[o] < maxi[threadIdx.x])) {
        maxv[threadIdx.x] = b;
        maxi[threadIdx.x] = maxi[o];
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    block_sum[blockIdx.x] = sums[0];
    block_argmax[blockIdx.x] = maxi[0];
  }
}

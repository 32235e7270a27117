// Soft thresholding (the proximal operator of lambda*|x|), written the C++ way: a kernel
// template in a namespace, a device function template, and an explicit instantiation,
// so the PTX entry is an Itanium-mangled symbol.
namespace imgops {

template <typename T>
__device__ __forceinline__ T shrink(T v, T lambda) {
  if (v > lambda) return v - lambda;
  if (v < -lambda) return v + lambda;
  return T(0);
}

template <typename T, int UNROLL>
__global__ void soft_threshold(T* __restrict__ out, const T* __restrict__ in, T lambda, int n) {
  int first = blockIdx.x * blockDim.x * UNROLL + threadIdx.x;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    int i = first + u * blockDim.x;
    if (i < n) {
      out[i] = shrink(in[i], lambda);
    }
  }
}

template __global__ void soft_threshold<float, 2>(float*, const float*, float, int);

}  // namespace imgops

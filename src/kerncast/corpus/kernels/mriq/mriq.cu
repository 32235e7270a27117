// MRI reconstruction, the Q matrix: for every voxel x, Q(x) = sum over K-space samples k
// of |phi_k|^2 (cos, sin)(2 pi k . x). Each block stages BLOCK samples at a time in
// shared memory as (kx, ky, kz, |phi|^2), computing |phi|^2 as it loads them; each
// thread accumulates VPT voxels (blockDim apart) against every staged sample.

#ifndef BLOCK
#define BLOCK 256  // threads per block = samples per shared-memory chunk
#endif
#ifndef VPT
#define VPT 1  // voxels per thread
#endif

extern "C" __global__ void mriq_compute(const float* __restrict__ kx, const float* __restrict__ ky,
                                        const float* __restrict__ kz,
                                        const float* __restrict__ phi_r,
                                        const float* __restrict__ phi_i,
                                        const float* __restrict__ x, const float* __restrict__ y,
                                        const float* __restrict__ z, float* __restrict__ qr,
                                        float* __restrict__ qi, int numk, int numx) {
  __shared__ float4 samples[BLOCK];
  int tid = threadIdx.x;
  int first = blockIdx.x * BLOCK * VPT + tid;
  float px[VPT], py[VPT], pz[VPT], re[VPT], im[VPT];
#pragma unroll
  for (int j = 0; j < VPT; j++) {
    int v = min(first + j * BLOCK, numx - 1);
    px[j] = x[v];
    py[j] = y[v];
    pz[j] = z[v];
    re[j] = 0.0f;
    im[j] = 0.0f;
  }
  for (int base = 0; base < numk; base += BLOCK) {
    int s = base + tid;
    if (s < numk) {
      float pr = phi_r[s], pi = phi_i[s];
      samples[tid] = make_float4(kx[s], ky[s], kz[s], pr * pr + pi * pi);
    }
    __syncthreads();
    int count = min(BLOCK, numk - base);
    if (first < numx) {
      for (int k = 0; k < count; k++) {
        float4 c = samples[k];
#pragma unroll
        for (int j = 0; j < VPT; j++) {
          float arg = 6.2831853071795865f * (c.x * px[j] + c.y * py[j] + c.z * pz[j]);
          re[j] += c.w * cosf(arg);
          im[j] += c.w * sinf(arg);
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < VPT; j++) {
    int v = first + j * BLOCK;
    if (v < numx) {
      qr[v] = re[j];
      qi[v] = im[j];
    }
  }
}

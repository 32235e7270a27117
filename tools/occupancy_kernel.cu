// A kernel whose register use is set at build time with ptxas --maxrregcount: NACC
// accumulators stay live across a loop, so ptxas uses as many registers as allowed.
#ifndef NACC
#define NACC 256
#endif
extern "C" __global__ void pressure(float* out, const float* in, int iters) {
  float acc[NACC];
#pragma unroll
  for (int k = 0; k < NACC; k++) acc[k] = in[threadIdx.x + k];
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < NACC; k++) acc[k] = acc[k] * acc[(k + 1) % NACC] + 1.0f;
  }
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < NACC; k++) s += acc[k] * (k + 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

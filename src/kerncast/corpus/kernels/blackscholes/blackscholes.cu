// Black-Scholes prices of European calls and puts (float32), one option per thread
// (IPT options per thread, blockDim apart). The cumulative normal distribution is the
// Abramowitz-Stegun polynomial approximation 26.2.17.

#ifndef IPT
#define IPT 1  // options per thread
#endif

__device__ float cnd(float d) {
  const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f;
  const float a4 = -1.821255978f, a5 = 1.330274429f;
  float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float poly = k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5))));
  float tail = 0.3989422804014327f * expf(-0.5f * d * d) * poly;
  return d > 0.0f ? 1.0f - tail : tail;
}

extern "C" __global__ void black_scholes(const float* __restrict__ spot,
                                         const float* __restrict__ strike,
                                         const float* __restrict__ years,
                                         float* __restrict__ call, float* __restrict__ put,
                                         int n, float r, float v) {
  int first = blockIdx.x * blockDim.x * IPT + threadIdx.x;
#pragma unroll
  for (int j = 0; j < IPT; j++) {
    int i = first + j * blockDim.x;
    if (i < n) {
      float s = spot[i], x = strike[i], t = years[i];
      float vol_t = v * sqrtf(t);
      float d1 = (logf(s / x) + (r + 0.5f * v * v) * t) / vol_t;
      float d2 = d1 - vol_t;
      float n1 = cnd(d1), n2 = cnd(d2);
      float disc = x * expf(-r * t);
      call[i] = s * n1 - disc * n2;
      put[i] = disc * (1.0f - n2) - s * (1.0f - n1);
    }
  }
}

// Black-Scholes prices of European calls and puts (float32), one option per work-item
// (IPT options per work-item, the group size apart); Abramowitz-Stegun 26.2.17 for the
// cumulative normal distribution.

#ifndef IPT
#define IPT 1  // options per work-item
#endif

float cnd(float d) {
  const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f;
  const float a4 = -1.821255978f, a5 = 1.330274429f;
  float k = 1.0f / (1.0f + 0.2316419f * fabs(d));
  float poly = k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5))));
  float tail = 0.3989422804014327f * exp(-0.5f * d * d) * poly;
  return d > 0.0f ? 1.0f - tail : tail;
}

__kernel void black_scholes(__global const float* restrict spot,
                            __global const float* restrict strike,
                            __global const float* restrict years,
                            __global float* restrict call, __global float* restrict put,
                            int n, float r, float v) {
  int first = get_group_id(0) * get_local_size(0) * IPT + get_local_id(0);
#pragma unroll
  for (int j = 0; j < IPT; j++) {
    int i = first + j * (int)get_local_size(0);
    if (i < n) {
      float s = spot[i], x = strike[i], t = years[i];
      float vol_t = v * sqrt(t);
      float d1 = (log(s / x) + (r + 0.5f * v * v) * t) / vol_t;
      float d2 = d1 - vol_t;
      float n1 = cnd(d1), n2 = cnd(d2);
      float disc = x * exp(-r * t);
      call[i] = s * n1 - disc * n2;
      put[i] = disc * (1.0f - n2) - s * (1.0f - n1);
    }
  }
}

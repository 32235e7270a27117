// Monte Carlo pricing of an arithmetic-average Asian call: each work-item follows PATHS
// geometric Brownian motion paths of `steps` monitoring dates and sums their payoffs
// (and the squares). Normals from Philox-2x32-10 (key = seed, counter = (path, pair of
// steps)) and Box-Muller.

#ifndef PATHS
#define PATHS 16  // paths per work-item
#endif

uint2 philox2x32_10(uint c0, uint c1, uint key) {
#pragma unroll
  for (int round = 0; round < 10; round++) {
    uint hi = mul_hi(0xD256D193u, c0);
    uint lo = 0xD256D193u * c0;
    c0 = hi ^ key ^ c1;
    c1 = lo;
    key += 0x9E3779B9u;
  }
  return (uint2)(c0, c1);
}

__kernel void mc_option_paths(__global float* restrict sums, __global float* restrict squares,
                              int total_paths, int steps, float s0, float strike, float r,
                              float v, float years, uint seed) {
  int t = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (t >= total_paths / PATHS) return;
  float dt = years / steps;
  float drift = (r - 0.5f * v * v) * dt, vol = v * sqrt(dt);
  float log_s0 = log(s0);
  float sum = 0.0f, square = 0.0f;
  for (int p = 0; p < PATHS; p++) {
    uint path = (uint)(t * PATHS + p);
    float log_s = log_s0, total = 0.0f;
    for (int k = 0; k < steps / 2; k++) {
      uint2 w = philox2x32_10(path, (uint)k, seed);
      float u1 = ((float)(w.x >> 9) + 0.5f) * 1.1920928955078125e-7f;  // (0, 1), exact
      float u2 = ((float)(w.y >> 9) + 0.5f) * 1.1920928955078125e-7f;
      float radius = sqrt(-2.0f * log(u1));
      float angle = 6.2831853071795865f * u2;
      log_s += drift + vol * (radius * cos(angle));
      total += exp(log_s);
      log_s += drift + vol * (radius * sin(angle));
      total += exp(log_s);
    }
    float payoff = fmax(total / steps - strike, 0.0f);
    sum += payoff;
    square += payoff * payoff;
  }
  sums[t] = sum;
  squares[t] = square;
}

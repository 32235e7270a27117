// Monte Carlo pricing of an arithmetic-average Asian call: each thread follows PATHS
// geometric Brownian motion paths of `steps` monitoring dates and sums their payoffs
// (and the squares, for the error estimate). The normals come from a counter-based
// generator, Philox-2x32 with 10 rounds (key = seed, counter = (path, pair of steps)),
// and Box-Muller; nothing is stored between launches and no state is shared.

#ifndef PATHS
#define PATHS 16  // paths per thread
#endif

__device__ uint2 philox2x32_10(unsigned int c0, unsigned int c1, unsigned int key) {
#pragma unroll
  for (int round = 0; round < 10; round++) {
    unsigned int hi = __umulhi(0xD256D193u, c0);
    unsigned int lo = 0xD256D193u * c0;
    c0 = hi ^ key ^ c1;
    c1 = lo;
    key += 0x9E3779B9u;
  }
  return make_uint2(c0, c1);
}

extern "C" __global__ void mc_option_paths(float* __restrict__ sums, float* __restrict__ squares,
                                           int total_paths, int steps, float s0, float strike,
                                           float r, float v, float years, unsigned int seed) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= total_paths / PATHS) return;
  float dt = years / steps;
  float drift = (r - 0.5f * v * v) * dt, vol = v * sqrtf(dt);
  float log_s0 = logf(s0);
  float sum = 0.0f, square = 0.0f;
  for (int p = 0; p < PATHS; p++) {
    unsigned int path = (unsigned int)(t * PATHS + p);
    float log_s = log_s0, total = 0.0f;
    for (int k = 0; k < steps / 2; k++) {
      uint2 w = philox2x32_10(path, (unsigned int)k, seed);
      float u1 = ((float)(w.x >> 9) + 0.5f) * 1.1920928955078125e-7f;  // (0, 1), exact
      float u2 = ((float)(w.y >> 9) + 0.5f) * 1.1920928955078125e-7f;
      float radius = sqrtf(-2.0f * logf(u1));
      float angle = 6.2831853071795865f * u2;
      log_s += drift + vol * (radius * cosf(angle));
      total += expf(log_s);
      log_s += drift + vol * (radius * sinf(angle));
      total += expf(log_s);
    }
    float payoff = fmaxf(total / steps - strike, 0.0f);
    sum += payoff;
    square += payoff * payoff;
  }
  sums[t] = sum;
  squares[t] = square;
}

/* Monte Carlo Asian call, single-threaded: the same paths, generator and sums per
 * group of `paths` paths as the GPU threads. */
#include "kc_harness.h"

static void philox2x32_10(uint32_t c0, uint32_t c1, uint32_t key, uint32_t out[2]) {
  for (int round = 0; round < 10; round++) {
    uint64_t prod = (uint64_t)0xD256D193u * c0;
    c0 = (uint32_t)(prod >> 32) ^ key ^ c1;
    c1 = (uint32_t)prod;
    key += 0x9E3779B9u;
  }
  out[0] = c0;
  out[1] = c1;
}

__attribute__((noinline)) void roi_mc_option_paths(float *sums, float *squares, int total_paths,
                                                   int per_thread, int steps, float s0,
                                                   float strike, float r, float v, float years,
                                                   uint32_t seed) {
  float dt = years / steps;
  float drift = (r - 0.5f * v * v) * dt, vol = v * sqrtf(dt);
  for (int t = 0; t < total_paths / per_thread; t++) {
    float sum = 0.0f, square = 0.0f;
    for (int p = 0; p < per_thread; p++) {
      uint32_t path = (uint32_t)(t * per_thread + p), w[2];
      float log_s = logf(s0), total = 0.0f;
      for (int k = 0; k < steps / 2; k++) {
        philox2x32_10(path, (uint32_t)k, seed, w);
        float u1 = ((float)(w[0] >> 9) + 0.5f) * 1.1920928955078125e-7f;
        float u2 = ((float)(w[1] >> 9) + 0.5f) * 1.1920928955078125e-7f;
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
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  int total = (int)kc_int(&r, "total_paths");
  KC_ROI_BEGIN(&r);
  roi_mc_option_paths(kc_buffer(&r, "sums"), kc_buffer(&r, "squares"), total,
                      (int)(total / kc_count(&r, "sums")), (int)kc_int(&r, "steps"),
                      (float)kc_float(&r, "s0"), (float)kc_float(&r, "strike"),
                      (float)kc_float(&r, "r"), (float)kc_float(&r, "v"),
                      (float)kc_float(&r, "years"), (uint32_t)kc_int(&r, "seed"));
  KC_ROI_END(&r);
  kc_check(&r, "sums");
  kc_check(&r, "squares");
  return kc_finish(&r);
}

/* European calls on a binomial tree by backward induction, single-threaded. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_binomial_option(const float *spot, const float *strike,
                                                   const float *years, float *call, float *val,
                                                   int options, int steps, float r, float v) {
  for (int opt = 0; opt < options; opt++) {
    float s = spot[opt], x = strike[opt], t = years[opt];
    float dt = t / steps;
    float vsdt = v * sqrtf(dt);
    float disc = expf(-r * dt);
    // p = (exp(r dt) - d) / (u - d) with u = exp(vsdt), d = 1 / u, written with expm1
    // against cancellation (u - d is ~2 vsdt, a few percent or less).
    float em_d = expm1f(-vsdt);
    float p = (expm1f(r * dt) - em_d) / (expm1f(vsdt) - em_d);
    float pu = p * disc, pd = disc - pu;
    for (int i = 0; i <= steps; i++) val[i] = fmaxf(s * expf(vsdt * (float)(2 * i - steps)) - x, 0.0f);
    for (int n = steps; n > 0; n--)
      for (int i = 0; i < n; i++) val[i] = pu * val[i + 1] + pd * val[i];
    call[opt] = val[0];
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  int steps = (int)kc_int(&r, "steps");
  float *val = malloc(sizeof(float) * (size_t)(steps + 1));
  KC_ROI_BEGIN(&r);
  roi_binomial_option(kc_buffer(&r, "spot"), kc_buffer(&r, "strike"), kc_buffer(&r, "years"),
                      kc_buffer(&r, "call"), val, (int)kc_count(&r, "call"), steps,
                      (float)kc_float(&r, "r"), (float)kc_float(&r, "v"));
  KC_ROI_END(&r);
  free(val);
  kc_check(&r, "call");
  return kc_finish(&r);
}

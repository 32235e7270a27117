/* Black-Scholes call and put prices, single-threaded. */
#include "kc_harness.h"

static float cnd(float d) {
  const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f;
  const float a4 = -1.821255978f, a5 = 1.330274429f;
  float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float poly = k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5))));
  float tail = 0.3989422804014327f * expf(-0.5f * d * d) * poly;
  return d > 0.0f ? 1.0f - tail : tail;
}

__attribute__((noinline)) void roi_black_scholes(const float *spot, const float *strike,
                                                 const float *years, float *call, float *put,
                                                 int n, float r, float v) {
  for (int i = 0; i < n; i++) {
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

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_black_scholes(kc_buffer(&r, "spot"), kc_buffer(&r, "strike"), kc_buffer(&r, "years"),
                    kc_buffer(&r, "call"), kc_buffer(&r, "put"), (int)kc_int(&r, "n"),
                    (float)kc_float(&r, "r"), (float)kc_float(&r, "v"));
  KC_ROI_END(&r);
  kc_check(&r, "call");
  kc_check(&r, "put");
  return kc_finish(&r);
}

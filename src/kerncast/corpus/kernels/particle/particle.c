/* Particle filter measurement update, single-threaded. */
#include "kc_harness.h"

#define FG 228.0f
#define BG 100.0f
#define INV_2VAR 0.00125f
#define FLOOR 1.0e-3f

static float pixel_score(float v) {
  float a = v - FG, b = v - BG;
  return logf(FLOOR + expf(-a * a * INV_2VAR)) - logf(FLOOR + expf(-b * b * INV_2VAR));
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

__attribute__((noinline)) void roi_particle_likelihood(const float *frame, const float *px,
                                                       const float *py, const float *weights,
                                                       const int32_t *dx, const int32_t *dy,
                                                       float *loglik, float *new_weights, int n,
                                                       int npix, int width, int height) {
  for (int i = 0; i < n; i++) {
    int cx = (int)floorf(px[i] + 0.5f);
    int cy = (int)floorf(py[i] + 0.5f);
    float sum = 0.0f;
    for (int k = 0; k < npix; k++) {
      int x = clampi(cx + dx[k], 0, width - 1);
      int y = clampi(cy + dy[k], 0, height - 1);
      sum += pixel_score(frame[y * width + x]);
    }
    float mean = sum / (float)npix;
    loglik[i] = mean;
    new_weights[i] = weights[i] * expf(mean);
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_particle_likelihood(kc_buffer(&r, "frame"), kc_buffer(&r, "px"), kc_buffer(&r, "py"),
                          kc_buffer(&r, "weights"), kc_buffer(&r, "dx"), kc_buffer(&r, "dy"),
                          kc_buffer(&r, "loglik"), kc_buffer(&r, "new_weights"),
                          (int)kc_int(&r, "n"), (int)kc_count(&r, "dx"), (int)kc_int(&r, "width"),
                          (int)kc_int(&r, "height"));
  KC_ROI_END(&r);
  kc_check(&r, "loglik");
  kc_check(&r, "new_weights");
  return kc_finish(&r);
}

/* All-pairs n-body accelerations and potentials, single-threaded. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_nbody_forces(const float *pos, float *acc, int n, float eps2) {
  for (int i = 0; i < n; i++) {
    float x = pos[4 * i], y = pos[4 * i + 1], z = pos[4 * i + 2];
    float ax = 0.0f, ay = 0.0f, az = 0.0f, phi = 0.0f;
    for (int j = 0; j < n; j++) {
      float dx = pos[4 * j] - x, dy = pos[4 * j + 1] - y, dz = pos[4 * j + 2] - z;
      float r2 = dx * dx + dy * dy + dz * dz + eps2;
      float inv = 1.0f / sqrtf(r2);
      float s = pos[4 * j + 3] * inv * inv * inv;
      ax += dx * s;
      ay += dy * s;
      az += dz * s;
      phi -= pos[4 * j + 3] * inv;
    }
    acc[4 * i] = ax;
    acc[4 * i + 1] = ay;
    acc[4 * i + 2] = az;
    acc[4 * i + 3] = phi;
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_nbody_forces(kc_buffer(&r, "pos"), kc_buffer(&r, "acc"), (int)kc_int(&r, "n"),
                   (float)kc_float(&r, "eps2"));
  KC_ROI_END(&r);
  kc_check(&r, "acc");
  return kc_finish(&r);
}

/* One Gaussian elimination step at pivot k, single-threaded. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_gauss_multipliers(const float *a, float *mult, int n, int k) {
  float pivot = a[(long)k * n + k];
  for (int i = k + 1; i < n; i++) mult[i - k - 1] = a[(long)i * n + k] / pivot;
}

__attribute__((noinline)) void roi_gauss_update(float *a, float *b, const float *mult, int n, int k) {
  const float *pivot_row = a + (long)k * n;
  for (int i = k + 1; i < n; i++) {
    float m = mult[i - k - 1];
    float *row = a + (long)i * n;
    for (int j = k + 1; j < n; j++) row[j] -= m * pivot_row[j];
    row[k] = 0.0f;
    b[i] -= m * b[k];
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  int n = (int)kc_int(&r, "n"), k = (int)kc_int(&r, "k");
  if (kc_is(&r, "gauss_multipliers")) {
    KC_ROI_BEGIN(&r);
    roi_gauss_multipliers(kc_buffer(&r, "a"), kc_buffer(&r, "mult"), n, k);
    KC_ROI_END(&r);
    kc_check(&r, "mult");
  } else {
    KC_ROI_BEGIN(&r);
    roi_gauss_update(kc_buffer(&r, "a"), kc_buffer(&r, "b"), kc_buffer(&r, "mult"), n, k);
    KC_ROI_END(&r);
    kc_check(&r, "a");
    kc_check(&r, "b");
  }
  return kc_finish(&r);
}

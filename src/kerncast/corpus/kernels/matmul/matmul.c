/* Dense matrix multiply C = A * B, single-threaded (i-k-j loop order). */
#include "kc_harness.h"

__attribute__((noinline)) void roi_matmul(const float *a, const float *b, float *c, int n) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) c[i * n + j] = 0.0f;
    for (int k = 0; k < n; k++) {
      float aik = a[i * n + k];
      for (int j = 0; j < n; j++) c[i * n + j] += aik * b[k * n + j];
    }
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_matmul(kc_buffer(&r, "a"), kc_buffer(&r, "b"), kc_buffer(&r, "c"), (int)kc_int(&r, "n"));
  KC_ROI_END(&r);
  kc_check(&r, "c");
  return kc_finish(&r);
}

/* Matrix-vector product y = A x, single-threaded: row-major and column-major A. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_matvec_rows(const float *a, const float *x, float *y, int m, int n) {
  for (int i = 0; i < m; i++) {
    float sum = 0.0f;
    for (int k = 0; k < n; k++) sum += a[(long)i * n + k] * x[k];
    y[i] = sum;
  }
}

/* Column-major A: accumulate column by column, streaming through memory in order. */
__attribute__((noinline)) void roi_matvec_cols(const float *at, const float *x, float *y, int m, int n) {
  for (int i = 0; i < m; i++) y[i] = 0.0f;
  for (int k = 0; k < n; k++) {
    float xk = x[k];
    const float *col = at + (long)k * m;
    for (int i = 0; i < m; i++) y[i] += col[i] * xk;
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  int m = (int)kc_int(&r, "m"), n = (int)kc_int(&r, "n");
  float *x = kc_buffer(&r, "x"), *y = kc_buffer(&r, "y");
  if (kc_is(&r, "matvec_colmajor")) {
    float *at = kc_buffer(&r, "at");
    KC_ROI_BEGIN(&r);
    roi_matvec_cols(at, x, y, m, n);
    KC_ROI_END(&r);
  } else {
    float *a = kc_buffer(&r, "a");
    KC_ROI_BEGIN(&r);
    roi_matvec_rows(a, x, y, m, n);
    KC_ROI_END(&r);
  }
  kc_check(&r, "y");
  return kc_finish(&r);
}

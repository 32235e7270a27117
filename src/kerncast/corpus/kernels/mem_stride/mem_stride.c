/* Memory-access micro-benchmarks, single-threaded: the same gathers and copies. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_copy_strided(const float *x, float *y, int cols, int stride) {
  for (int q = 0; q < stride; q++)
    for (int r = 0; r < cols; r++) y[q * cols + r] = x[r * stride + q];
}

__attribute__((noinline)) void roi_copy_offset(const float *x, float *y, int n, int offset) {
  for (int i = 0; i < n; i++) y[i] = x[i + offset];
}

__attribute__((noinline)) void roi_copy_vector(const float *x, float *y, int n) {
  for (int i = 0; i < n; i++) y[i] = x[i];
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  const float *x = kc_buffer(&r, "x");
  float *y = kc_buffer(&r, "y");
  KC_ROI_BEGIN(&r);
  if (kc_is(&r, "copy_strided"))
    roi_copy_strided(x, y, (int)kc_int(&r, "cols"), (int)kc_int(&r, "stride"));
  else if (kc_is(&r, "copy_offset"))
    roi_copy_offset(x, y, (int)kc_int(&r, "n"), (int)kc_int(&r, "offset"));
  else
    roi_copy_vector(x, y, (int)kc_int(&r, "n"));
  KC_ROI_END(&r);
  kc_check(&r, "y");
  return kc_finish(&r);
}

/* Out-of-place matrix transpose, single-threaded: out (cols x rows) = in^T. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_transpose(const float *in, float *out, int rows, int cols) {
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) out[(long)c * rows + r] = in[(long)r * cols + c];
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_transpose(kc_buffer(&r, "in"), kc_buffer(&r, "out"), (int)kc_int(&r, "rows"),
                (int)kc_int(&r, "cols"));
  KC_ROI_END(&r);
  kc_check(&r, "out");
  return kc_finish(&r);
}

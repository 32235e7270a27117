/* Sparse matrix-vector product y = A x, single-threaded: CSR and ELLPACK. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_spmv_csr(const int32_t *row_ptr, const int32_t *cols,
                                            const float *vals, const float *x, float *y, int rows) {
  for (int r = 0; r < rows; r++) {
    float sum = 0.0f;
    for (int e = row_ptr[r]; e < row_ptr[r + 1]; e++) sum += vals[e] * x[cols[e]];
    y[r] = sum;
  }
}

/* Row by row, as the GPU threads do (a column-major walk would be faster on a CPU). */
__attribute__((noinline)) void roi_spmv_ell(const int32_t *cols, const float *vals, const float *x,
                                            float *y, int rows, int width) {
  for (int r = 0; r < rows; r++) {
    float sum = 0.0f;
    for (int k = 0; k < width; k++) {
      long i = (long)k * rows + r;
      if (cols[i] >= 0) sum += vals[i] * x[cols[i]];
    }
    y[r] = sum;
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  int rows = (int)kc_int(&r, "rows");
  if (kc_is(&r, "spmv_ell")) {
    KC_ROI_BEGIN(&r);
    roi_spmv_ell(kc_buffer(&r, "cols"), kc_buffer(&r, "vals"), kc_buffer(&r, "x"),
                 kc_buffer(&r, "y"), rows, (int)kc_int(&r, "width"));
    KC_ROI_END(&r);
  } else {
    KC_ROI_BEGIN(&r);
    roi_spmv_csr(kc_buffer(&r, "row_ptr"), kc_buffer(&r, "cols"), kc_buffer(&r, "vals"),
                 kc_buffer(&r, "x"), kc_buffer(&r, "y"), rows);
    KC_ROI_END(&r);
  }
  kc_check(&r, "y");
  return kc_finish(&r);
}

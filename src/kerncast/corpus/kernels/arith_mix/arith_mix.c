/* Arithmetic micro-benchmarks, single-threaded: the same chain for one element after another. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_arith_fp32(const float *x, float *y, int n, int iters, float m,
                                              float c) {
  for (int i = 0; i < n; i++) {
    float a = x[i];
    for (int k = 0; k < iters; k++) a = a * m + c;
    y[i] = a;
  }
}

__attribute__((noinline)) void roi_arith_fp64(const double *x, double *y, int n, int iters,
                                              double m, double c) {
  for (int i = 0; i < n; i++) {
    double a = x[i];
    for (int k = 0; k < iters; k++) a = a * m + c;
    y[i] = a;
  }
}

__attribute__((noinline)) void roi_arith_int32(const uint32_t *x, uint32_t *y, int n, int iters,
                                               uint32_t mul, uint32_t add) {
  for (int i = 0; i < n; i++) {
    uint32_t t = x[i];
    for (int k = 0; k < iters; k++) {
      t ^= t >> 7;
      t = t * mul + add;
      t ^= (t << 9) & 0xA5A5A5A5u;
      t += t >> 13;
    }
    y[i] = t;
  }
}

__attribute__((noinline)) void roi_arith_sfu(const float *x, float *y, int n, int iters) {
  for (int i = 0; i < n; i++) {
    float a = x[i];
    for (int k = 0; k < iters; k++) {
      float q = a * a + 1.0f;
      a = 0.25f * sinf(a) + 0.25f * cosf(a) + 0.125f * logf(q) + 0.125f * sqrtf(q) +
          0.125f / sqrtf(q) + 0.125f * expf(-a * a);
    }
    y[i] = a;
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  int n = (int)kc_int(&r, "n");
  void *x = kc_buffer(&r, "x"), *y = kc_buffer(&r, "y");
  KC_ROI_BEGIN(&r);
  if (kc_is(&r, "arith_fp32")) {
    roi_arith_fp32(x, y, n, (int)kc_int(&r, "iters"), (float)kc_float(&r, "m"),
                   (float)kc_float(&r, "c"));
  } else if (kc_is(&r, "arith_fp64")) {
    roi_arith_fp64(x, y, n, (int)kc_int(&r, "iters"), kc_float(&r, "m"), kc_float(&r, "c"));
  } else if (kc_is(&r, "arith_int32")) {
    roi_arith_int32(x, y, n, (int)kc_int(&r, "iters"), (uint32_t)kc_int(&r, "mul"),
                    (uint32_t)kc_int(&r, "add"));
  } else if (kc_is(&r, "arith_sfu")) {
    roi_arith_sfu(x, y, n, (int)kc_int(&r, "iters"));
  } else { /* arith_mixed: the fp32 chain, fmas steps long */
    roi_arith_fp32(x, y, n, (int)kc_int(&r, "fmas"), (float)kc_float(&r, "m"),
                   (float)kc_float(&r, "c"));
  }
  KC_ROI_END(&r);
  kc_check(&r, "y");
  return kc_finish(&r);
}

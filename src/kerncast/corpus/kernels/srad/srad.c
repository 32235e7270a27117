/* One SRAD iteration (Yu and Acton 2002), single-threaded: coefficients, then update. */
#include "kc_harness.h"

static int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

__attribute__((noinline)) void roi_srad_coefficients(const float *img, float *coef, int rows, int cols,
                                                     float q0sq) {
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) {
      long idx = (long)r * cols + c;
      float ic = img[idx];
      float dn = img[(long)clampi(r - 1, 0, rows - 1) * cols + c] - ic;
      float ds = img[(long)clampi(r + 1, 0, rows - 1) * cols + c] - ic;
      float dw = img[(long)r * cols + clampi(c - 1, 0, cols - 1)] - ic;
      float de = img[(long)r * cols + clampi(c + 1, 0, cols - 1)] - ic;
      float g2 = (dn * dn + ds * ds + dw * dw + de * de) / (ic * ic);
      float lap = (dn + ds + dw + de) / ic;
      float num = 0.5f * g2 - 0.0625f * lap * lap;
      float den = 1.0f + 0.25f * lap;
      float qsq = num / (den * den);
      float value = 1.0f / (1.0f + (qsq - q0sq) / (q0sq * (1.0f + q0sq)));
      coef[idx] = value < 0.0f ? 0.0f : (value > 1.0f ? 1.0f : value);
    }
}

__attribute__((noinline)) void roi_srad_apply(const float *img, const float *coef, float *out, int rows,
                                              int cols, float step) {
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) {
      long idx = (long)r * cols + c;
      long south = (long)clampi(r + 1, 0, rows - 1) * cols + c;
      long east = (long)r * cols + clampi(c + 1, 0, cols - 1);
      long north = (long)clampi(r - 1, 0, rows - 1) * cols + c;
      long west = (long)r * cols + clampi(c - 1, 0, cols - 1);
      float ic = img[idx], cc = coef[idx];
      float flux = coef[south] * (img[south] - ic) + coef[east] * (img[east] - ic) +
                   cc * (img[north] - ic) + cc * (img[west] - ic);
      out[idx] = ic + step * flux;
    }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  int rows = (int)kc_int(&r, "rows"), cols = (int)kc_int(&r, "cols");
  if (kc_is(&r, "srad_coefficients")) {
    KC_ROI_BEGIN(&r);
    roi_srad_coefficients(kc_buffer(&r, "img"), kc_buffer(&r, "coef"), rows, cols,
                          (float)kc_float(&r, "q0sq"));
    KC_ROI_END(&r);
    kc_check(&r, "coef");
  } else {
    KC_ROI_BEGIN(&r);
    roi_srad_apply(kc_buffer(&r, "img"), kc_buffer(&r, "coef"), kc_buffer(&r, "out"), rows, cols,
                   (float)kc_float(&r, "step"));
    KC_ROI_END(&r);
    kc_check(&r, "out");
  }
  return kc_finish(&r);
}

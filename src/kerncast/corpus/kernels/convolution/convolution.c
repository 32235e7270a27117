/* Separable convolution passes (rows or columns) with clamp-to-edge, single-threaded. */
#include "kc_harness.h"

static int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

__attribute__((noinline)) void roi_convolve_rows(const float *in, const float *w, float *out, int rows,
                                                 int cols, int radius) {
  for (int y = 0; y < rows; y++) {
    const float *line = in + (long)y * cols;
    for (int x = 0; x < cols; x++) {
      float acc = 0.0f;
      for (int k = 0; k <= 2 * radius; k++) acc += w[k] * line[clampi(x + k - radius, 0, cols - 1)];
      out[(long)y * cols + x] = acc;
    }
  }
}

/* Columns pass: accumulate whole rows at a time so that memory is read in order. */
__attribute__((noinline)) void roi_convolve_cols(const float *in, const float *w, float *out, int rows,
                                                 int cols, int radius) {
  for (int y = 0; y < rows; y++) {
    float *dst = out + (long)y * cols;
    for (int x = 0; x < cols; x++) dst[x] = 0.0f;
    for (int k = 0; k <= 2 * radius; k++) {
      const float *src = in + (long)clampi(y + k - radius, 0, rows - 1) * cols;
      for (int x = 0; x < cols; x++) dst[x] += w[k] * src[x];
    }
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  int rows = (int)kc_int(&r, "rows"), cols = (int)kc_int(&r, "cols");
  int radius = (int)(kc_count(&r, "w") - 1) / 2;
  float *in = kc_buffer(&r, "in"), *w = kc_buffer(&r, "w"), *out = kc_buffer(&r, "out");
  if (kc_is(&r, "convolve_cols")) {
    KC_ROI_BEGIN(&r);
    roi_convolve_cols(in, w, out, rows, cols, radius);
    KC_ROI_END(&r);
  } else {
    KC_ROI_BEGIN(&r);
    roi_convolve_rows(in, w, out, rows, cols, radius);
    KC_ROI_END(&r);
  }
  kc_check(&r, "out");
  return kc_finish(&r);
}

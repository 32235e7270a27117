/* One explicit step of the compact thermal model, single-threaded. */
#include "kc_harness.h"

typedef struct {
  float cap_inv, gx, gy, gz, t_amb;
} coefficients;

__attribute__((noinline)) void roi_thermal(const float *temp, const float *power, float *out,
                                           int rows, int cols, coefficients k) {
  for (int r = 0; r < rows; r++) {
    const float *up = temp + (long)(r > 0 ? r - 1 : r) * cols;
    const float *mid = temp + (long)r * cols;
    const float *down = temp + (long)(r < rows - 1 ? r + 1 : r) * cols;
    for (int c = 0; c < cols; c++) {
      float tc = mid[c];
      float tw = c > 0 ? mid[c - 1] : tc;
      float te = c < cols - 1 ? mid[c + 1] : tc;
      float flow = k.gx * ((te - tc) + (tw - tc)) + k.gy * ((up[c] - tc) + (down[c] - tc)) +
                   k.gz * (k.t_amb - tc);
      out[(long)r * cols + c] = tc + k.cap_inv * (power[(long)r * cols + c] + flow);
    }
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  coefficients k = {(float)kc_float(&r, "cap_inv"), (float)kc_float(&r, "gx"), (float)kc_float(&r, "gy"),
                    (float)kc_float(&r, "gz"), (float)kc_float(&r, "t_amb")};
  KC_ROI_BEGIN(&r);
  roi_thermal(kc_buffer(&r, "temp"), kc_buffer(&r, "power"), kc_buffer(&r, "out"),
              (int)kc_int(&r, "rows"), (int)kc_int(&r, "cols"), k);
  KC_ROI_END(&r);
  kc_check(&r, "out");
  return kc_finish(&r);
}

/* Sum reduction, single-threaded: the same partial sum per tile of bx * items elements. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_reduce(const float *x, float *partial, int n, int tile) {
  int blocks = (n + tile - 1) / tile;
  for (int b = 0; b < blocks; b++) {
    int end = (b + 1) * tile < n ? (b + 1) * tile : n;
    double sum = 0.0;
    for (int e = b * tile; e < end; e++) sum += x[e];
    partial[b] = (float)sum;
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_reduce(kc_buffer(&r, "x"), kc_buffer(&r, "partial"), (int)kc_int(&r, "n"),
             (int)kc_int(&r, "tile"));
  KC_ROI_END(&r);
  kc_check(&r, "partial");
  return kc_finish(&r);
}

/* Image histogram, single-threaded: one increment per pixel. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_histogram(const uint8_t *img, uint32_t *bins, int n) {
  for (int i = 0; i < n; i++) bins[img[i]]++;
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_histogram(kc_buffer(&r, "img"), kc_buffer(&r, "bins"), (int)kc_int(&r, "n"));
  KC_ROI_END(&r);
  kc_check(&r, "bins");
  return kc_finish(&r);
}

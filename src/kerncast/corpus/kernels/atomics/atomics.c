/* Atomic-contention micro-benchmark, single-threaded: plain increments of the same bins. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_atomic_contention(const uint32_t *keys, int32_t *bins, int n,
                                                     int nbins) {
  for (int i = 0; i < n; i++) bins[keys[i] & (uint32_t)(nbins - 1)] += 1;
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_atomic_contention(kc_buffer(&r, "keys"), kc_buffer(&r, "bins"), (int)kc_int(&r, "n"),
                        (int)kc_int(&r, "nbins"));
  KC_ROI_END(&r);
  kc_check(&r, "bins");
  return kc_finish(&r);
}

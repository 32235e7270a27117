/* Block-wise inclusive scan, single-threaded: a running sum restarted every seg elements. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_scan_block(const int32_t *x, int32_t *y, int n, int seg) {
  for (int base = 0; base < n; base += seg) {
    int32_t sum = 0;
    int end = base + seg < n ? base + seg : n;
    for (int e = base; e < end; e++) {
      sum += x[e];
      y[e] = sum;
    }
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_scan_block(kc_buffer(&r, "x"), kc_buffer(&r, "y"), (int)kc_int(&r, "n"),
                 (int)kc_int(&r, "seg"));
  KC_ROI_END(&r);
  kc_check(&r, "y");
  return kc_finish(&r);
}

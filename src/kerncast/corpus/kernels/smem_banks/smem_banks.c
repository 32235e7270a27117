/* Shared-memory bank-conflict micro-benchmark, single-threaded: the same windowed sums. */
#include "kc_harness.h"

#define WORDS 2048

__attribute__((noinline)) void roi_smem_bank_stride(const uint32_t *table, uint32_t *y, int n,
                                                    int iters, int stride) {
  for (int i = 0; i < n; i++) {
    uint32_t start = (uint32_t)i * (uint32_t)stride, acc = 0u;
    for (int k = 0; k < iters; k++) acc += table[(start + (uint32_t)k) & (WORDS - 1)];
    y[i] = acc;
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_smem_bank_stride(kc_buffer(&r, "table"), kc_buffer(&r, "y"), (int)kc_int(&r, "n"),
                       (int)kc_int(&r, "iters"), (int)kc_int(&r, "stride"));
  KC_ROI_END(&r);
  kc_check(&r, "y");
  return kc_finish(&r);
}

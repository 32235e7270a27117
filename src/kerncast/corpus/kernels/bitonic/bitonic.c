/* Bitonic sorting, single-threaded: the same network per segment, and the same global step. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_bitonic_block(const uint32_t *keys, uint32_t *out, int n,
                                                 int seg) {
  uint32_t *s = malloc(sizeof(uint32_t) * seg);
  for (int base = 0; base < n; base += seg) {
    for (int idx = 0; idx < seg; idx++) s[idx] = base + idx < n ? keys[base + idx] : 0xFFFFFFFFu;
    for (int size = 2; size <= seg; size <<= 1)
      for (int stride = size >> 1; stride > 0; stride >>= 1)
        for (int p = 0; p < seg / 2; p++) {
          int i = 2 * p - (p & (stride - 1));
          uint32_t a = s[i], b = s[i + stride];
          if ((a > b) == ((i & size) == 0)) {
            s[i] = b;
            s[i + stride] = a;
          }
        }
    for (int idx = 0; idx < seg && base + idx < n; idx++) out[base + idx] = s[idx];
  }
  free(s);
}

__attribute__((noinline)) void roi_bitonic_step(uint32_t *keys, int n, int size, int stride) {
  for (int p = 0; p < n / 2; p++) {
    int i = 2 * p - (p & (stride - 1));
    uint32_t a = keys[i], b = keys[i + stride];
    if ((a > b) == ((i & size) == 0)) {
      keys[i] = b;
      keys[i + stride] = a;
    }
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  int n = (int)kc_int(&r, "n");
  KC_ROI_BEGIN(&r);
  if (kc_is(&r, "bitonic_block"))
    roi_bitonic_block(kc_buffer(&r, "keys"), kc_buffer(&r, "out"), n, (int)kc_int(&r, "seg"));
  else
    roi_bitonic_step(kc_buffer(&r, "keys"), n, (int)kc_int(&r, "size"), (int)kc_int(&r, "stride"));
  KC_ROI_END(&r);
  kc_check(&r, kc_is(&r, "bitonic_block") ? "out" : "keys");
  return kc_finish(&r);
}

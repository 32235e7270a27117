/* Radix-sort pass, single-threaded: per-tile digit counts, and the stable scatter. */
#include "kc_harness.h"

#define DIGIT(key) (((key) >> shift) & 15u)

__attribute__((noinline)) void roi_radix_digit_count(const uint32_t *keys, uint32_t *counts,
                                                     int n, int shift, int tile, int nblocks) {
  for (int b = 0; b < nblocks; b++) {
    uint32_t c[16] = {0};
    int end = (b + 1) * tile < n ? (b + 1) * tile : n;
    for (int e = b * tile; e < end; e++) c[DIGIT(keys[e])]++;
    for (int d = 0; d < 16; d++) counts[d * nblocks + b] = c[d];
  }
}

/* Each tile's keys go, in order, to offsets[d * nblocks + b] onwards. */
__attribute__((noinline)) void roi_radix_scatter(const uint32_t *keys, const uint32_t *offsets,
                                                 uint32_t *out, int n, int shift, int tile,
                                                 int nblocks) {
  for (int b = 0; b < nblocks; b++) {
    uint32_t next[16];
    for (int d = 0; d < 16; d++) next[d] = offsets[d * nblocks + b];
    int end = (b + 1) * tile < n ? (b + 1) * tile : n;
    for (int e = b * tile; e < end; e++) out[next[DIGIT(keys[e])]++] = keys[e];
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  int n = (int)kc_int(&r, "n"), shift = (int)kc_int(&r, "shift");
  int tile = (int)kc_int(&r, "tile"), nblocks = (int)kc_int(&r, "nblocks");
  KC_ROI_BEGIN(&r);
  if (kc_is(&r, "radix_digit_count"))
    roi_radix_digit_count(kc_buffer(&r, "keys"), kc_buffer(&r, "counts"), n, shift, tile, nblocks);
  else
    roi_radix_scatter(kc_buffer(&r, "keys"), kc_buffer(&r, "offsets"), kc_buffer(&r, "out"), n,
                      shift, tile, nblocks);
  KC_ROI_END(&r);
  kc_check(&r, kc_is(&r, "radix_digit_count") ? "counts" : "out");
  return kc_finish(&r);
}

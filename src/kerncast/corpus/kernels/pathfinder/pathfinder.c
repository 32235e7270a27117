/* Pathfinder, single-threaded: pyr rows of cost[c] = wall[c] + min(cost[c-1..c+1]). */
#include "kc_harness.h"

#define BIG 0x3FFFFFFF

static int min2(int a, int b) { return a < b ? a : b; }

__attribute__((noinline)) void roi_pathfinder(const int32_t *wall, const int32_t *src,
                                              int32_t *dst, int32_t *tmp, int cols, int pyr) {
  const int32_t *prev = src;
  for (int i = 0; i < pyr; i++) {
    int32_t *out = (pyr - i) % 2 ? dst : tmp;  /* the last row lands in dst */
    for (int c = 0; c < cols; c++) {
      int best = prev[c];
      if (c > 0) best = min2(best, prev[c - 1]);
      if (c + 1 < cols) best = min2(best, prev[c + 1]);
      out[c] = best + wall[(long)i * cols + c];
    }
    prev = out;
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  int cols = (int)kc_int(&r, "cols");
  int pyr = (int)(kc_count(&r, "wall") / cols);
  int32_t *tmp = malloc(sizeof(int32_t) * (size_t)cols);
  KC_ROI_BEGIN(&r);
  roi_pathfinder(kc_buffer(&r, "wall"), kc_buffer(&r, "src"), kc_buffer(&r, "dst"), tmp, cols, pyr);
  KC_ROI_END(&r);
  free(tmp);
  kc_check(&r, "dst");
  return kc_finish(&r);
}

/* One Bellman-Ford round over the active vertices, single-threaded. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_sssp_relax(const int32_t *row_ptr, const int32_t *cols,
                                              const int32_t *weights, const uint8_t *active,
                                              const int32_t *dist_in, int32_t *dist,
                                              uint8_t *next_active, int n) {
  for (int v = 0; v < n; v++) {
    if (!active[v]) continue;
    int dv = dist_in[v];
    for (int e = row_ptr[v]; e < row_ptr[v + 1]; e++) {
      int u = cols[e];
      int cand = dv + weights[e];
      if (cand < dist[u]) {
        dist[u] = cand;
        if (cand < dist_in[u]) next_active[u] = 1;
      }
    }
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_sssp_relax(kc_buffer(&r, "row_ptr"), kc_buffer(&r, "cols"), kc_buffer(&r, "weights"),
                 kc_buffer(&r, "active"), kc_buffer(&r, "dist_in"), kc_buffer(&r, "dist"),
                 kc_buffer(&r, "next_active"), (int)kc_int(&r, "n"));
  KC_ROI_END(&r);
  kc_check(&r, "dist");
  kc_check(&r, "next_active");
  return kc_finish(&r);
}

/* Breadth-first search, one level, single-threaded: the frontier as flags or as a queue. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_bfs_frontier(const int32_t *row_ptr, const int32_t *cols,
                                                const uint8_t *frontier, int32_t *level,
                                                uint8_t *next_frontier, int n) {
  for (int v = 0; v < n; v++) {
    if (!frontier[v]) continue;
    int next = level[v] + 1;
    for (int e = row_ptr[v]; e < row_ptr[v + 1]; e++) {
      int u = cols[e];
      if (level[u] < 0) {
        level[u] = next;
        next_frontier[u] = 1;
      }
    }
  }
}

__attribute__((noinline)) void roi_bfs_queue(const int32_t *row_ptr, const int32_t *cols,
                                             const int32_t *queue_in, int32_t *level,
                                             int32_t *queue_out, int32_t *queue_count, int qlen) {
  for (int i = 0; i < qlen; i++) {
    int v = queue_in[i];
    int next = level[v] + 1;
    for (int e = row_ptr[v]; e < row_ptr[v + 1]; e++) {
      int u = cols[e];
      if (level[u] < 0) {
        level[u] = next;
        queue_out[(*queue_count)++] = u;
      }
    }
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  if (kc_is(&r, "bfs_frontier_expand")) {
    KC_ROI_BEGIN(&r);
    roi_bfs_frontier(kc_buffer(&r, "row_ptr"), kc_buffer(&r, "cols"), kc_buffer(&r, "frontier"),
                     kc_buffer(&r, "level"), kc_buffer(&r, "next_frontier"), (int)kc_int(&r, "n"));
    KC_ROI_END(&r);
    kc_check(&r, "level");
    kc_check(&r, "next_frontier");
  } else {
    KC_ROI_BEGIN(&r);
    roi_bfs_queue(kc_buffer(&r, "row_ptr"), kc_buffer(&r, "cols"), kc_buffer(&r, "queue_in"),
                  kc_buffer(&r, "level"), kc_buffer(&r, "queue_out"), kc_buffer(&r, "queue_count"),
                  (int)kc_int(&r, "qlen"));
    KC_ROI_END(&r);
    kc_check(&r, "level");
    kc_check(&r, "queue_count");
  }
  return kc_finish(&r);
}

/* k-means assignment step, single-threaded: nearest centroid of every point. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_kmeans_assign(const float *points, const float *centroids,
                                                 int32_t *membership, int n, int k, int d) {
  for (int p = 0; p < n; p++) {
    int best = 0;
    float best_dist = 3.0e38f;
    for (int c = 0; c < k; c++) {
      float dist = 0.0f;
      for (int j = 0; j < d; j++) {
        float diff = points[(long)j * n + p] - centroids[c * d + j];
        dist += diff * diff;
      }
      if (dist < best_dist) {
        best_dist = dist;
        best = c;
      }
    }
    membership[p] = best;
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  int n = (int)kc_int(&r, "n");
  int d = (int)(kc_count(&r, "points") / n);
  int k = (int)(kc_count(&r, "centroids") / d);
  KC_ROI_BEGIN(&r);
  roi_kmeans_assign(kc_buffer(&r, "points"), kc_buffer(&r, "centroids"), kc_buffer(&r, "membership"),
                    n, k, d);
  KC_ROI_END(&r);
  kc_check(&r, "membership");
  return kc_finish(&r);
}

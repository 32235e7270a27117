// k-means assignment step: the nearest of K centroids (squared Euclidean distance over
// D features, float32) for every point. Points are stored feature-major (D x n).

#ifndef K
#define K 32  // centroids
#endif
#ifndef D
#define D 16  // features
#endif
#ifndef SHARED
#define SHARED 1  // stage the centroids in local memory (else read them through the cache)
#endif

__kernel void kmeans_assign(__global const float* restrict points,
                            __global const float* restrict centroids,
                            __global int* restrict membership, int n) {
  int p = get_group_id(0) * get_local_size(0) + get_local_id(0);
#if SHARED
  __local float cs[K * D];
  for (int i = get_local_id(0); i < K * D; i += get_local_size(0)) cs[i] = centroids[i];
  barrier(CLK_LOCAL_MEM_FENCE);
#else
  __global const float* cs = centroids;
#endif
  if (p >= n) return;
  float pt[D];
#pragma unroll
  for (int j = 0; j < D; j++) pt[j] = points[j * n + p];
  int best = 0;
  float best_dist = 3.0e38f;
  for (int c = 0; c < K; c++) {
    float dist = 0.0f;
#pragma unroll
    for (int j = 0; j < D; j++) {
      float diff = pt[j] - cs[c * D + j];
      dist += diff * diff;
    }
    if (dist < best_dist) {
      best_dist = dist;
      best = c;
    }
  }
  membership[p] = best;
}

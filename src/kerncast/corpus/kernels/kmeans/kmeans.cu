// k-means assignment step: the nearest of K centroids (squared Euclidean distance over
// D features, float32) for every point. Points are stored feature-major (D x n), so a
// warp reads each feature of 32 consecutive points in one coalesced access.

#ifndef K
#define K 32  // centroids
#endif
#ifndef D
#define D 16  // features
#endif
#ifndef SHARED
#define SHARED 1  // stage the centroids in shared memory (else read them through the cache)
#endif

extern "C" __global__ void kmeans_assign(const float* __restrict__ points,
                                         const float* __restrict__ centroids,
                                         int* __restrict__ membership, int n) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
#if SHARED
  __shared__ float cs[K * D];
  for (int i = threadIdx.x; i < K * D; i += blockDim.x) cs[i] = centroids[i];
  __syncthreads();
#else
  const float* cs = centroids;
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

// Particle filter, measurement update: each particle scores the pixels of a disc
// template placed at its (rounded) position with a robust log-likelihood ratio of
// "object" against "background", and its weight is multiplied by exp(mean score).

#ifndef NPIX
#define NPIX 113  // pixels of the disc template
#endif
#ifndef STAGE
#define STAGE 1  // stage the template offsets in shared memory (else read them through the cache)
#endif

#define FG 228.0f
#define BG 100.0f
#define INV_2VAR 0.00125f  // 1 / (2 * 20^2)
#define FLOOR 1.0e-3f

__device__ float pixel_score(float v) {
  float a = v - FG, b = v - BG;
  return logf(FLOOR + expf(-a * a * INV_2VAR)) - logf(FLOOR + expf(-b * b * INV_2VAR));
}

extern "C" __global__ void particle_likelihood(const float* __restrict__ frame,
                                               const float* __restrict__ px,
                                               const float* __restrict__ py,
                                               const float* __restrict__ weights,
                                               const int* __restrict__ dx,
                                               const int* __restrict__ dy,
                                               float* __restrict__ loglik,
                                               float* __restrict__ new_weights, int n, int width,
                                               int height) {
#if STAGE
  __shared__ int sdx[NPIX], sdy[NPIX];
  for (int k = threadIdx.x; k < NPIX; k += blockDim.x) {
    sdx[k] = dx[k];
    sdy[k] = dy[k];
  }
  __syncthreads();
#else
  const int* sdx = dx;
  const int* sdy = dy;
#endif
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int cx = (int)floorf(px[i] + 0.5f);
  int cy = (int)floorf(py[i] + 0.5f);
  float sum = 0.0f;
  for (int k = 0; k < NPIX; k++) {
    int x = min(max(cx + sdx[k], 0), width - 1);
    int y = min(max(cy + sdy[k], 0), height - 1);
    sum += pixel_score(frame[y * width + x]);
  }
  float mean = sum / (float)NPIX;
  loglik[i] = mean;
  new_weights[i] = weights[i] * expf(mean);
}

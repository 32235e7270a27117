// Particle filter, measurement update: each particle scores the pixels of a disc
// template placed at its (rounded) position with a robust log-likelihood ratio of
// "object" against "background", and its weight is multiplied by exp(mean score).

#ifndef NPIX
#define NPIX 113  // pixels of the disc template
#endif
#ifndef STAGE
#define STAGE 1  // stage the template offsets in local memory (else read them through the cache)
#endif

#define FG 228.0f
#define BG 100.0f
#define INV_2VAR 0.00125f  // 1 / (2 * 20^2)
#define FLOOR 1.0e-3f

float pixel_score(float v) {
  float a = v - FG, b = v - BG;
  return log(FLOOR + exp(-a * a * INV_2VAR)) - log(FLOOR + exp(-b * b * INV_2VAR));
}

__kernel void particle_likelihood(__global const float* restrict frame,
                                  __global const float* restrict px,
                                  __global const float* restrict py,
                                  __global const float* restrict weights,
                                  __global const int* restrict dx,
                                  __global const int* restrict dy,
                                  __global float* restrict loglik,
                                  __global float* restrict new_weights, int n, int width,
                                  int height) {
#if STAGE
  __local int sdx[NPIX], sdy[NPIX];
  for (int k = get_local_id(0); k < NPIX; k += get_local_size(0)) {
    sdx[k] = dx[k];
    sdy[k] = dy[k];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#else
  __global const int* sdx = dx;
  __global const int* sdy = dy;
#endif
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i >= n) return;
  int cx = (int)floor(px[i] + 0.5f);
  int cy = (int)floor(py[i] + 0.5f);
  float sum = 0.0f;
  for (int k = 0; k < NPIX; k++) {
    int x = min(max(cx + sdx[k], 0), width - 1);
    int y = min(max(cy + sdy[k], 0), height - 1);
    sum += pixel_score(frame[y * width + x]);
  }
  float mean = sum / (float)NPIX;
  loglik[i] = mean;
  new_weights[i] = weights[i] * exp(mean);
}

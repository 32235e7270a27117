// Separable 2-D convolution of a rows x cols float32 image, one pass per kernel:
//   convolve_rows: out[y][x] = sum_k w[k] * in[y][x + k - RADIUS]
//   convolve_cols: out[y][x] = sum_k w[k] * in[y + k - RADIUS][x]
// for k = 0 .. 2 * RADIUS, with clamp-to-edge borders. Each block stages its tile and
// the apron of RADIUS pixels on both sides in shared memory.

#ifndef RADIUS
#define RADIUS 4
#endif
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 4
#endif
#ifndef PX
#define PX 1
#endif
#ifndef PY
#define PY 1
#endif
#define TAPS (2 * RADIUS + 1)
#define ROW_W (BX * PX + 2 * RADIUS)
#define COL_H (BY * PY + 2 * RADIUS)

// A block covers BY rows x (BX * PX) columns; each thread computes PX pixels BX apart.
extern "C" __global__ void convolve_rows(const float* __restrict__ in, const float* __restrict__ w,
                                         float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[BY][ROW_W];
  int tx = threadIdx.x, ty = threadIdx.y;
  int y = blockIdx.y * BY + ty;
  int x0 = blockIdx.x * (BX * PX);
  int ysrc = min(y, rows - 1);
#pragma unroll
  for (int j = 0; j < (ROW_W + BX - 1) / BX; j++) {
    int i = tx + j * BX;
    if (i < ROW_W) tile[ty][i] = in[ysrc * cols + min(max(x0 + i - RADIUS, 0), cols - 1)];
  }
  __syncthreads();
#pragma unroll
  for (int p = 0; p < PX; p++) {
    int lx = tx + p * BX;
    int x = x0 + lx;
    if (y < rows && x < cols) {
      float acc = 0.0f;
#pragma unroll
      for (int k = 0; k < TAPS; k++) acc += w[k] * tile[ty][lx + k];
      out[y * cols + x] = acc;
    }
  }
}

// A block covers (BY * PY) rows x BX columns; each thread computes PY pixels BY rows apart.
extern "C" __global__ void convolve_cols(const float* __restrict__ in, const float* __restrict__ w,
                                         float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[COL_H][BX];
  int tx = threadIdx.x, ty = threadIdx.y;
  int x = blockIdx.x * BX + tx;
  int y0 = blockIdx.y * (BY * PY);
  int xsrc = min(x, cols - 1);
#pragma unroll
  for (int j = 0; j < (COL_H + BY - 1) / BY; j++) {
    int i = ty + j * BY;
    if (i < COL_H) tile[i][tx] = in[min(max(y0 + i - RADIUS, 0), rows - 1) * cols + xsrc];
  }
  __syncthreads();
#pragma unroll
  for (int p = 0; p < PY; p++) {
    int ly = ty + p * BY;
    int y = y0 + ly;
    if (y < rows && x < cols) {
      float acc = 0.0f;
#pragma unroll
      for (int k = 0; k < TAPS; k++) acc += w[k] * tile[ly + k][tx];
      out[y * cols + x] = acc;
    }
  }
}

// 2-D DCT-II (orthonormal, JPEG's forward transform) of the 8x8 blocks of a float32
// image, pixel values level-shifted by -128. A block of 8*TX x 8*TY threads handles
// TX x TY image blocks, one thread per pixel: the pixels go to shared memory, a row
// pass leaves the horizontal transforms in a second shared array, and a column pass
// produces the coefficients, written in place of the block's pixels. PAD adds a
// column to the shared arrays against bank conflicts.

#ifndef TX
#define TX 2  // 8x8 image blocks per thread block, across
#endif
#ifndef TY
#define TY 2  // and down
#endif
#ifndef PAD
#define PAD 0
#endif

// basis[u][k] = a(u) cos((2k + 1) u pi / 16), a(0) = sqrt(1/8), a(u > 0) = sqrt(2/8)
__constant__ float basis[64] = {
  0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f,
  0.490392640f, 0.415734806f, 0.277785117f, 0.097545161f, -0.097545161f, -0.277785117f, -0.415734806f, -0.490392640f,
  0.461939766f, 0.191341716f, -0.191341716f, -0.461939766f, -0.461939766f, -0.191341716f, 0.191341716f, 0.461939766f,
  0.415734806f, -0.097545161f, -0.490392640f, -0.277785117f, 0.277785117f, 0.490392640f, 0.097545161f, -0.415734806f,
  0.353553391f, -0.353553391f, -0.353553391f, 0.353553391f, 0.353553391f, -0.353553391f, -0.353553391f, 0.353553391f,
  0.277785117f, -0.490392640f, 0.097545161f, 0.415734806f, -0.415734806f, -0.097545161f, 0.490392640f, -0.277785117f,
  0.191341716f, -0.461939766f, 0.461939766f, -0.191341716f, -0.191341716f, 0.461939766f, -0.461939766f, 0.191341716f,
  0.097545161f, -0.277785117f, 0.415734806f, -0.490392640f, 0.490392640f, -0.415734806f, 0.277785117f, -0.097545161f,
};

extern "C" __global__ void dct8x8(const float* __restrict__ image, float* __restrict__ coef,
                                  int width, int height) {
  __shared__ float pix[8 * TY][8 * TX + PAD];
  __shared__ float rows[8 * TY][8 * TX + PAD];
  int lx = threadIdx.x, ly = threadIdx.y;
  int gx = blockIdx.x * 8 * TX + lx, gy = blockIdx.y * 8 * TY + ly;
  int inside = gx < width && gy < height;
  pix[ly][lx] = inside ? image[gy * width + gx] - 128.0f : 0.0f;
  __syncthreads();
  int u = lx & 7, x0 = lx & ~7;
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < 8; k++) acc += basis[u * 8 + k] * pix[ly][x0 + k];
  rows[ly][lx] = acc;
  __syncthreads();
  int v = ly & 7, y0 = ly & ~7;
  acc = 0.0f;
#pragma unroll
  for (int k = 0; k < 8; k++) acc += basis[v * 8 + k] * rows[y0 + k][lx];
  if (inside) coef[gy * width + gx] = acc;
}

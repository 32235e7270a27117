// 2-D DCT-II (orthonormal, JPEG's forward transform) of the 8x8 blocks of a float32
// image, pixel values level-shifted by -128. A work-group of 8*TX x 8*TY work-items
// handles TX x TY image blocks: pixels to local memory, a row pass, a column pass;
// coefficients written in place of the block's pixels. PAD pads the local arrays.

#ifndef TX
#define TX 2  // 8x8 image blocks per work-group, across
#endif
#ifndef TY
#define TY 2  // and down
#endif
#ifndef PAD
#define PAD 0
#endif

// basis[u][k] = a(u) cos((2k + 1) u pi / 16), a(0) = sqrt(1/8), a(u > 0) = sqrt(2/8)
__constant float basis[64] = {
  0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f,
  0.490392640f, 0.415734806f, 0.277785117f, 0.097545161f, -0.097545161f, -0.277785117f, -0.415734806f, -0.490392640f,
  0.461939766f, 0.191341716f, -0.191341716f, -0.461939766f, -0.461939766f, -0.191341716f, 0.191341716f, 0.461939766f,
  0.415734806f, -0.097545161f, -0.490392640f, -0.277785117f, 0.277785117f, 0.490392640f, 0.097545161f, -0.415734806f,
  0.353553391f, -0.353553391f, -0.353553391f, 0.353553391f, 0.353553391f, -0.353553391f, -0.353553391f, 0.353553391f,
  0.277785117f, -0.490392640f, 0.097545161f, 0.415734806f, -0.415734806f, -0.097545161f, 0.490392640f, -0.277785117f,
  0.191341716f, -0.461939766f, 0.461939766f, -0.191341716f, -0.191341716f, 0.461939766f, -0.461939766f, 0.191341716f,
  0.097545161f, -0.277785117f, 0.415734806f, -0.490392640f, 0.490392640f, -0.415734806f, 0.277785117f, -0.097545161f,
};

__kernel void dct8x8(__global const float* restrict image, __global float* restrict coef,
                     int width, int height) {
  __local float pix[8 * TY][8 * TX + PAD];
  __local float rows[8 * TY][8 * TX + PAD];
  int lx = get_local_id(0), ly = get_local_id(1);
  int gx = get_group_id(0) * 8 * TX + lx, gy = get_group_id(1) * 8 * TY + ly;
  int inside = gx < width && gy < height;
  pix[ly][lx] = inside ? image[gy * width + gx] - 128.0f : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  int u = lx & 7, x0 = lx & ~7;
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < 8; k++) acc += basis[u * 8 + k] * pix[ly][x0 + k];
  rows[ly][lx] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  int v = ly & 7, y0 = ly & ~7;
  acc = 0.0f;
#pragma unroll
  for (int k = 0; k < 8; k++) acc += basis[v * 8 + k] * rows[y0 + k][lx];
  if (inside) coef[gy * width + gx] = acc;
}

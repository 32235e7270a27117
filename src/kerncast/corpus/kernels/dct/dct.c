/* 2-D DCT-II of the 8x8 blocks of an image, single-threaded (row pass, column pass). */
#include "kc_harness.h"

static const float basis[64] = {
  0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f, 0.353553391f,
  0.490392640f, 0.415734806f, 0.277785117f, 0.097545161f, -0.097545161f, -0.277785117f, -0.415734806f, -0.490392640f,
  0.461939766f, 0.191341716f, -0.191341716f, -0.461939766f, -0.461939766f, -0.191341716f, 0.191341716f, 0.461939766f,
  0.415734806f, -0.097545161f, -0.490392640f, -0.277785117f, 0.277785117f, 0.490392640f, 0.097545161f, -0.415734806f,
  0.353553391f, -0.353553391f, -0.353553391f, 0.353553391f, 0.353553391f, -0.353553391f, -0.353553391f, 0.353553391f,
  0.277785117f, -0.490392640f, 0.097545161f, 0.415734806f, -0.415734806f, -0.097545161f, 0.490392640f, -0.277785117f,
  0.191341716f, -0.461939766f, 0.461939766f, -0.191341716f, -0.191341716f, 0.461939766f, -0.461939766f, 0.191341716f,
  0.097545161f, -0.277785117f, 0.415734806f, -0.490392640f, 0.490392640f, -0.415734806f, 0.277785117f, -0.097545161f,
};

__attribute__((noinline)) void roi_dct8x8(const float *image, float *coef, int width, int height) {
  float pix[8][8], rows[8][8];
  for (int by = 0; by < height; by += 8) {
    for (int bx = 0; bx < width; bx += 8) {
      for (int y = 0; y < 8; y++)
        for (int x = 0; x < 8; x++) pix[y][x] = image[(long)(by + y) * width + bx + x] - 128.0f;
      for (int y = 0; y < 8; y++)
        for (int u = 0; u < 8; u++) {
          float acc = 0.0f;
          for (int k = 0; k < 8; k++) acc += basis[u * 8 + k] * pix[y][k];
          rows[y][u] = acc;
        }
      for (int v = 0; v < 8; v++)
        for (int u = 0; u < 8; u++) {
          float acc = 0.0f;
          for (int k = 0; k < 8; k++) acc += basis[v * 8 + k] * rows[k][u];
          coef[(long)(by + v) * width + bx + u] = acc;
        }
    }
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_dct8x8(kc_buffer(&r, "image"), kc_buffer(&r, "coef"), (int)kc_int(&r, "width"),
             (int)kc_int(&r, "height"));
  KC_ROI_END(&r);
  kc_check(&r, "coef");
  return kc_finish(&r);
}

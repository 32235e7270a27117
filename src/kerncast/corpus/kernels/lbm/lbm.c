/* One fused stream-and-collide D2Q9 BGK step on a periodic lattice, single-threaded. */
#include "kc_harness.h"

static const int EX[9] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
static const int EY[9] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
static const float W[9] = {4.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9,
                           1.0f / 36, 1.0f / 36, 1.0f / 36, 1.0f / 36};

__attribute__((noinline)) void roi_lbm(const float *fin, float *fout, int nx, int ny, float omega) {
  long n = (long)nx * ny;
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++) {
      float f[9], rho = 0.0f, mx = 0.0f, my = 0.0f;
      for (int q = 0; q < 9; q++) {
        int sx = (x - EX[q] + nx) % nx, sy = (y - EY[q] + ny) % ny;
        f[q] = fin[q * n + (long)sy * nx + sx];
        rho += f[q];
        mx += EX[q] * f[q];
        my += EY[q] * f[q];
      }
      float ux = mx / rho, uy = my / rho, usq = 1.5f * (ux * ux + uy * uy);
      for (int q = 0; q < 9; q++) {
        float eu = EX[q] * ux + EY[q] * uy;
        float feq = W[q] * rho * (1.0f + 3.0f * eu + 4.5f * eu * eu - usq);
        fout[q * n + (long)y * nx + x] = f[q] - omega * (f[q] - feq);
      }
    }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_lbm(kc_buffer(&r, "fin"), kc_buffer(&r, "fout"), (int)kc_int(&r, "nx"), (int)kc_int(&r, "ny"),
          (float)kc_float(&r, "omega"));
  KC_ROI_END(&r);
  kc_check(&r, "fout");
  return kc_finish(&r);
}

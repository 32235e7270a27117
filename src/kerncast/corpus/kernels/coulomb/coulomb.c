/* Direct Coulomb summation onto a lattice plane, single-threaded. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_coulomb(const float *atoms, float *grid, int natoms, int gx,
                                           int gy, float h, float zslice) {
  for (int j = 0; j < gy; j++) {
    float y = h * (float)j;
    for (int i = 0; i < gx; i++) {
      float x = h * (float)i, e = 0.0f;
      for (int a = 0; a < natoms; a++) {
        float dx = x - atoms[4 * a], dy = y - atoms[4 * a + 1], dz = zslice - atoms[4 * a + 2];
        e += atoms[4 * a + 3] / sqrtf(dx * dx + dy * dy + dz * dz);
      }
      grid[j * gx + i] += e;
    }
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_coulomb(kc_buffer(&r, "atoms"), kc_buffer(&r, "grid"), (int)kc_int(&r, "natoms"),
              (int)kc_int(&r, "gx"), (int)kc_int(&r, "gy"), (float)kc_float(&r, "h"),
              (float)kc_float(&r, "zslice"));
  KC_ROI_END(&r);
  kc_check(&r, "grid");
  return kc_finish(&r);
}

/* 7-point stencil on a 3-D grid, single-threaded. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_stencil7(const float *in, float *out, int nx, int ny, int nz,
                                            float c0, float c1) {
  long plane = (long)nx * ny;
  for (int z = 0; z < nz; z++)
    for (int y = 0; y < ny; y++)
      for (int x = 0; x < nx; x++) {
        long idx = z * plane + (long)y * nx + x;
        if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
          out[idx] = in[idx];
          continue;
        }
        float sum = in[idx - 1] + in[idx + 1] + in[idx - nx] + in[idx + nx] + in[idx - plane] +
                    in[idx + plane];
        out[idx] = c0 * in[idx] + c1 * sum;
      }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_stencil7(kc_buffer(&r, "in"), kc_buffer(&r, "out"), (int)kc_int(&r, "nx"), (int)kc_int(&r, "ny"),
               (int)kc_int(&r, "nz"), (float)kc_float(&r, "c0"), (float)kc_float(&r, "c1"));
  KC_ROI_END(&r);
  kc_check(&r, "out");
  return kc_finish(&r);
}

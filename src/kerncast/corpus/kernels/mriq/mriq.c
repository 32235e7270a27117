/* MRI Q matrix, single-threaded: every voxel against every K-space sample. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_mriq(const float *kx, const float *ky, const float *kz,
                                        const float *phi_r, const float *phi_i, const float *x,
                                        const float *y, const float *z, float *qr, float *qi,
                                        int numk, int numx) {
  for (int v = 0; v < numx; v++) {
    float re = 0.0f, im = 0.0f;
    for (int k = 0; k < numk; k++) {
      float mag = phi_r[k] * phi_r[k] + phi_i[k] * phi_i[k];
      float arg = 6.2831853071795865f * (kx[k] * x[v] + ky[k] * y[v] + kz[k] * z[v]);
      re += mag * cosf(arg);
      im += mag * sinf(arg);
    }
    qr[v] = re;
    qi[v] = im;
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_mriq(kc_buffer(&r, "kx"), kc_buffer(&r, "ky"), kc_buffer(&r, "kz"), kc_buffer(&r, "phi_r"),
           kc_buffer(&r, "phi_i"), kc_buffer(&r, "x"), kc_buffer(&r, "y"), kc_buffer(&r, "z"),
           kc_buffer(&r, "qr"), kc_buffer(&r, "qi"), (int)kc_int(&r, "numk"),
           (int)kc_int(&r, "numx"));
  KC_ROI_END(&r);
  kc_check(&r, "qr");
  kc_check(&r, "qi");
  return kc_finish(&r);
}

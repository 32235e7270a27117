/* Branch-divergence micro-benchmark, single-threaded: the same branch per element. */
#include "kc_harness.h"

static const float M[8] = {0.99f, 0.98f, 0.97f, 0.96f, 0.95f, 0.94f, 0.93f, 0.92f};
static const float C[8] = {0.01f, 0.04f, 0.09f, 0.16f, 0.25f, 0.36f, 0.49f, 0.64f};

static int branch_of(int i, int pattern, const uint8_t *cls) {
  switch (pattern) {
    case 0: return (i >> 10) & 7;
    case 1: return (i >> 4) & 1;
    case 2: return i & 1;
    case 3: return i & 3;
    case 4: return i & 7;
    default: return cls[i] & 7;
  }
}

__attribute__((noinline)) void roi_branch_divergence(const float *x, const uint8_t *cls, float *y,
                                                     int n, int iters, int pattern) {
  for (int i = 0; i < n; i++) {
    int b = branch_of(i, pattern, cls);
    float a = x[i], m = M[b], c = C[b];
    for (int k = 0; k < iters; k++) a = a * m + c;
    y[i] = a;
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_branch_divergence(kc_buffer(&r, "x"), kc_buffer(&r, "cls"), kc_buffer(&r, "y"),
                        (int)kc_int(&r, "n"), (int)kc_int(&r, "iters"),
                        (int)kc_int(&r, "pattern"));
  KC_ROI_END(&r);
  kc_check(&r, "y");
  return kc_finish(&r);
}

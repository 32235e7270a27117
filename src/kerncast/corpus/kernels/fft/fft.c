/* One radix-2 Stockham FFT stage over a batch of signals, single-threaded. */
#include "kc_harness.h"

__attribute__((noinline)) void roi_fft_stage(const float *src, float *dst, int log_len,
                                             int log_ns, int batch) {
  long len = 1L << log_len, half = len / 2, ns = 1L << log_ns;
  for (int b = 0; b < batch; b++) {
    const float *in = src + 2 * b * len;
    float *out = dst + 2 * b * len;
    for (long j = 0; j < half; j++) {
      long k = j & (ns - 1), d = ((j >> log_ns) << (log_ns + 1)) + k;
      float angle = -3.14159265358979f * (float)k / (float)ns;
      float c = cosf(angle), s = sinf(angle);
      float ar = in[2 * j], ai = in[2 * j + 1];
      float br = in[2 * (j + half)], bi = in[2 * (j + half) + 1];
      float wr = br * c - bi * s, wi = br * s + bi * c;
      out[2 * d] = ar + wr;
      out[2 * d + 1] = ai + wi;
      out[2 * (d + ns)] = ar - wr;
      out[2 * (d + ns) + 1] = ai - wi;
    }
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_fft_stage(kc_buffer(&r, "src"), kc_buffer(&r, "dst"), (int)kc_int(&r, "log_len"),
                (int)kc_int(&r, "log_ns"), (int)kc_int(&r, "batch"));
  KC_ROI_END(&r);
  kc_check(&r, "dst");
  return kc_finish(&r);
}

// One radix-2 Stockham stage of a batched complex FFT (float32, interleaved re/im),
// out of place. Butterfly j of a signal of length L = 2^log_len combines elements j
// and j + L/2 with the twiddle exp(-i pi k / ns), k = j mod ns, ns = 2^log_ns, and
// writes the sum and the difference ns apart at (j div ns) * 2 ns + k. Each thread
// computes BPT butterflies, blockDim apart.

#ifndef BPT
#define BPT 1  // butterflies per thread
#endif

extern "C" __global__ void fft_radix2_stage(const float2* __restrict__ src,
                                            float2* __restrict__ dst, int log_len, int log_ns,
                                            int batch) {
  int half_len = 1 << (log_len - 1);
  int ns = 1 << log_ns;
  int first = blockIdx.x * blockDim.x * BPT + threadIdx.x;
#pragma unroll
  for (int u = 0; u < BPT; u++) {
    int t = first + u * blockDim.x;
    if (t < batch * half_len) {
      int j = t & (half_len - 1);
      int base = (t >> (log_len - 1)) << log_len;
      int k = j & (ns - 1);
      float2 a = src[base + j], b = src[base + j + half_len];
      float s, c;
      sincosf(-3.14159265358979f * (float)k / (float)ns, &s, &c);
      float2 bw = make_float2(b.x * c - b.y * s, b.x * s + b.y * c);
      int d = base + ((j >> log_ns) << (log_ns + 1)) + k;
      dst[d] = make_float2(a.x + bw.x, a.y + bw.y);
      dst[d + ns] = make_float2(a.x - bw.x, a.y - bw.y);
    }
  }
}

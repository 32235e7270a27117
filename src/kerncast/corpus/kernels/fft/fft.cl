// One radix-2 Stockham stage of a batched complex FFT (float32, interleaved re/im),
// out of place; BPT butterflies per work-item, the group size apart.

#ifndef BPT
#define BPT 1  // butterflies per work-item
#endif

__kernel void fft_radix2_stage(__global const float2* restrict src,
                               __global float2* restrict dst, int log_len, int log_ns,
                               int batch) {
  int half_len = 1 << (log_len - 1);
  int ns = 1 << log_ns;
  int first = get_group_id(0) * get_local_size(0) * BPT + get_local_id(0);
#pragma unroll
  for (int u = 0; u < BPT; u++) {
    int t = first + u * (int)get_local_size(0);
    if (t < batch * half_len) {
      int j = t & (half_len - 1);
      int base = (t >> (log_len - 1)) << log_len;
      int k = j & (ns - 1);
      float2 a = src[base + j], b = src[base + j + half_len];
      float c;
      float s = sincos(-3.14159265358979f * (float)k / (float)ns, &c);
      float2 bw = (float2)(b.x * c - b.y * s, b.x * s + b.y * c);
      int d = base + ((j >> log_ns) << (log_ns + 1)) + k;
      dst[d] = a + bw;
      dst[d + ns] = a - bw;
    }
  }
}

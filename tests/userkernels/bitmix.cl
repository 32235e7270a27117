// Integer hashing with OpenCL built-ins: each work-item mixes its 64-bit key with a
// 32-bit seed (splitmix64 finaliser, rotate, mul_hi, popcount, clz) and writes a 32-bit
// digest and a small bucket number.
__kernel void bitmix(__global const ulong* keys, __global uint* digest,
                     __global uchar* bucket, const uint seed, const int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  ulong z = keys[i] + 0x9E3779B97F4A7C15UL * (ulong)(seed + 1u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
  z ^= z >> 31;
  uint lo = (uint)z, hi = (uint)(z >> 32);
  uint d = rotate(lo, (uint)(hi & 31u)) ^ mul_hi(hi, 0x85EBCA6Bu);
  digest[i] = d + popcount(hi) + clz(lo | 1u);
  bucket[i] = (uchar)(d % 7u);
}

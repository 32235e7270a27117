// Deliberately faulty kernels for the measurement harness's tests.
#ifndef BROKEN
#define BROKEN 0
#endif
#if BROKEN
#error this configuration is deliberately broken
#endif

__kernel void accum(__global const float* a, __global float* acc, int n) {
  int i = get_global_id(0);
  if (i < n) acc[i] += a[i];
}

__kernel void half_written(__global const float* a, __global float* out, int n) {
  int i = get_global_id(0);
  if (i < n / 2) out[i] = a[i];
}

__kernel void wrong_values(__global const int* a, __global int* out, int n) {
  int i = get_global_id(0);
  if (i < n) out[i] = a[i] + 1;
}

__kernel void no_compile(__global const float* a, __global float* out, int n) {
  int i = get_global_id(0);
  if (i < n) out[i] = a[i];
}

__kernel void spin_forever(__global const float* a, __global float* out, int n) {
  volatile __global float* v = out;
  while (n > 0) v[0] = a[0];
}

__kernel void segfault(__global const float* a, __global float* out, int n) {
  int i = get_global_id(0);
  if (i < n) out[i + ((long)1 << 40)] = a[i];
}

// OpenCL C kernels for the PTX parser (clang-14 NVPTX back end + libclc).

__constant float k_weights[4] = {0.25f, 0.5f, 0.75f, 1.0f};

__kernel void vec_math(__global const float4* a, __global float4* out, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  float4 v = a[i];
  v.x = sin(v.x) + cos(v.y);
  v.y = sqrt(fabs(v.y)) + rsqrt(fabs(v.z) + 1.0f);
  v.z = exp(v.z) * log(fabs(v.w) + 1.0f);
  v.w = v.w / (v.x + 3.0f) + k_weights[i & 3];
  out[i] = v;
}

__kernel void local_reduce(__global const float* in, __global float* out, __local float* scratch, int n) {
  int gid = get_global_id(0);
  int lid = get_local_id(0);
  int size = get_local_size(0);
  scratch[lid] = gid < n ? in[gid] : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = size / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[get_group_id(0)] = scratch[0];
}

__kernel void histogram(__global const uint* in, __global uint* bins, int n) {
  __local uint local_bins[64];
  int lid = get_local_id(0);
  for (int b = lid; b < 64; b += get_local_size(0)) local_bins[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) atomic_inc(&local_bins[in[i] & 63]);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int b = lid; b < 64; b += get_local_size(0)) atomic_add(&bins[b], local_bins[b]);
}

__kernel void int_ops(__global const int* a, __global long* out, __global int* mx, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  int v = a[i];
  long w = (long)v * 2654435761L;
  w ^= w >> 13;
  out[i] = w % 1000003L + popcount(v) + clz(v) + mul_hi(v, 77) + rotate(v, 5);
  atomic_max(mx, v);
  atomic_cmpxchg(mx + 1, 0, v);
  atomic_xchg(mx + 2, v);
}

__kernel void branchy(__global const int* in, __global int* out, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  int v = in[i];
  int r = 0;
  for (int k = 0; k < (v & 31); k++) {
    if ((k ^ v) & 4) continue;
    if (r > 5000) break;
    r += k * v;
  }
  switch (v % 5) {
    case 0: r += 1; break;
    case 1: r *= 3; break;
    case 2: r -= 7; break;
    default: r = ~r;
  }
  out[i] = r;
}

__kernel void doubles(__global const double* x, __global double* y, int n) {
  int i = get_global_id(0);
  if (i < n) y[i] = sqrt(x[i]) / (x[i] + 1.0) + fma(x[i], x[i], 2.0) + convert_double(convert_int(x[i]));
}

// MRI reconstruction, the Q matrix: for every voxel x, Q(x) = sum over K-space samples k
// of |phi_k|^2 (cos, sin)(2 pi k . x). Samples staged BLOCK at a time in local memory
// as (kx, ky, kz, |phi|^2); VPT voxels per work-item (the group size apart).

#ifndef BLOCK
#define BLOCK 256  // work-items per group = samples per local-memory chunk
#endif
#ifndef VPT
#define VPT 1  // voxels per work-item
#endif

__kernel void mriq_compute(__global const float* restrict kx, __global const float* restrict ky,
                           __global const float* restrict kz,
                           __global const float* restrict phi_r,
                           __global const float* restrict phi_i,
                           __global const float* restrict x, __global const float* restrict y,
                           __global const float* restrict z, __global float* restrict qr,
                           __global float* restrict qi, int numk, int numx) {
  __local float4 samples[BLOCK];
  int tid = get_local_id(0);
  int first = get_group_id(0) * BLOCK * VPT + tid;
  float px[VPT], py[VPT], pz[VPT], re[VPT], im[VPT];
#pragma unroll
  for (int j = 0; j < VPT; j++) {
    int v = min(first + j * BLOCK, numx - 1);
    px[j] = x[v];
    py[j] = y[v];
    pz[j] = z[v];
    re[j] = 0.0f;
    im[j] = 0.0f;
  }
  for (int base = 0; base < numk; base += BLOCK) {
    int s = base + tid;
    if (s < numk) {
      float pr = phi_r[s], pi = phi_i[s];
      samples[tid] = (float4)(kx[s], ky[s], kz[s], pr * pr + pi * pi);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int count = min(BLOCK, numk - base);
    if (first < numx) {
      for (int k = 0; k < count; k++) {
        float4 c = samples[k];
#pragma unroll
        for (int j = 0; j < VPT; j++) {
          float arg = 6.2831853071795865f * (c.x * px[j] + c.y * py[j] + c.z * pz[j]);
          re[j] += c.w * cos(arg);
          im[j] += c.w * sin(arg);
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#pragma unroll
  for (int j = 0; j < VPT; j++) {
    int v = first + j * BLOCK;
    if (v < numx) {
      qr[v] = re[j];
      qi[v] = im[j];
    }
  }
}

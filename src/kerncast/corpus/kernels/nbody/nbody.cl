// All-pairs gravitational n-body step (G = 1, softening eps): the acceleration and the
// potential of every body. Bodies are (x, y, z, mass) float4s staged BLOCK at a time
// in local memory; UNROLL bodies per trip of the inner loop.

#ifndef BLOCK
#define BLOCK 256  // work-items per group = bodies per local-memory tile
#endif
#ifndef UNROLL
#define UNROLL 4  // bodies per trip of the inner loop
#endif

__kernel void nbody_forces(__global const float4* restrict pos, __global float4* restrict acc,
                           int n, float eps2) {
  __local float4 tile[BLOCK];
  int lid = get_local_id(0);
  int i = get_group_id(0) * BLOCK + lid;
  float4 me = i < n ? pos[i] : (float4)(0.0f);
  float ax = 0.0f, ay = 0.0f, az = 0.0f, phi = 0.0f;
  for (int base = 0; base < n; base += BLOCK) {
    int j = base + lid;
    tile[lid] = j < n ? pos[j] : (float4)(0.0f);  // massless pad
    barrier(CLK_LOCAL_MEM_FENCE);
    // The last tile may be partly padding: stop at the first multiple of UNROLL past
    // the real bodies (the padding is massless); threads past n only help load.
    int count = min(BLOCK, (n - base + UNROLL - 1) / UNROLL * UNROLL);
    if (i < n) {
#pragma unroll 1
      for (int k = 0; k < count; k += UNROLL) {
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
          float4 b = tile[k + u];
          float dx = b.x - me.x, dy = b.y - me.y, dz = b.z - me.z;
          float r2 = dx * dx + dy * dy + dz * dz + eps2;
          float inv = rsqrt(r2);
          float s = b.w * inv * inv * inv;
          ax += dx * s;
          ay += dy * s;
          az += dz * s;
          phi -= b.w * inv;
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (i < n) acc[i] = (float4)(ax, ay, az, phi);
}

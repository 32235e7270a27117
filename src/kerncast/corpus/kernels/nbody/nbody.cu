// All-pairs gravitational n-body step (G = 1, softening eps): the acceleration and the
// potential of every body. Bodies are (x, y, z, mass) float4s; each block stages
// BLOCK bodies at a time in shared memory (the tile is the block) and every thread
// accumulates the pull of the tile on its own body, UNROLL bodies per loop trip.

#ifndef BLOCK
#define BLOCK 256  // threads per block = bodies per shared-memory tile
#endif
#ifndef UNROLL
#define UNROLL 4  // bodies per trip of the inner loop
#endif

extern "C" __global__ void nbody_forces(const float4* __restrict__ pos, float4* __restrict__ acc,
                                        int n, float eps2) {
  __shared__ float4 tile[BLOCK];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  float4 me = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float ax = 0.0f, ay = 0.0f, az = 0.0f, phi = 0.0f;
  for (int base = 0; base < n; base += BLOCK) {
    int j = base + threadIdx.x;
    tile[threadIdx.x] = j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // massless pad
    __syncthreads();
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
          float inv = rsqrtf(r2);
          float s = b.w * inv * inv * inv;
          ax += dx * s;
          ay += dy * s;
          az += dz * s;
          phi -= b.w * inv;
        }
      }
    }
    __syncthreads();
  }
  if (i < n) acc[i] = make_float4(ax, ay, az, phi);
}

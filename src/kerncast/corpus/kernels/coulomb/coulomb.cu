// Direct Coulomb summation: adds the potential of a chunk of point charges to a plane
// (z = zslice) of a lattice of spacing h. Each thread computes UNROLL lattice points
// of one row, blockDim.x apart, reusing each atom's (dy^2 + dz^2) for all of them;
// the atoms are read in the same order by every thread (one broadcast load each).

#ifndef UNROLL
#define UNROLL 4  // lattice points per thread along x
#endif

extern "C" __global__ void coulomb_potential(const float4* __restrict__ atoms,
                                             float* __restrict__ grid, int natoms, int gx,
                                             int gy, float h, float zslice) {
  int i0 = blockIdx.x * blockDim.x * UNROLL + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i0 >= gx || j >= gy) return;
  float y = h * (float)j;
  float x[UNROLL], e[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    x[u] = h * (float)(i0 + u * (int)blockDim.x);
    e[u] = 0.0f;
  }
  for (int a = 0; a < natoms; a++) {
    float4 atom = atoms[a];
    float dy = y - atom.y, dz = zslice - atom.z;
    float dyz2 = dy * dy + dz * dz;
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      float dx = x[u] - atom.x;
      e[u] += atom.w * rsqrtf(dx * dx + dyz2);
    }
  }
#pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    int i = i0 + u * blockDim.x;
    if (i < gx) grid[j * gx + i] += e[u];
  }
}

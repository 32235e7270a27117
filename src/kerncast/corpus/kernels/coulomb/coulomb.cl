// Direct Coulomb summation: adds the potential of a chunk of point charges to a plane
// (z = zslice) of a lattice of spacing h. UNROLL lattice points per work-item along x,
// the group's x size apart, reusing each atom's (dy^2 + dz^2).

#ifndef UNROLL
#define UNROLL 4  // lattice points per work-item along x
#endif

__kernel void coulomb_potential(__global const float4* restrict atoms,
                                __global float* restrict grid, int natoms, int gx, int gy,
                                float h, float zslice) {
  int bx = get_local_size(0);
  int i0 = get_group_id(0) * bx * UNROLL + get_local_id(0);
  int j = get_group_id(1) * get_local_size(1) + get_local_id(1);
  if (i0 >= gx || j >= gy) return;
  float y = h * (float)j;
  float x[UNROLL], e[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    x[u] = h * (float)(i0 + u * bx);
    e[u] = 0.0f;
  }
  for (int a = 0; a < natoms; a++) {
    float4 atom = atoms[a];
    float dy = y - atom.y, dz = zslice - atom.z;
    float dyz2 = dy * dy + dz * dz;
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      float dx = x[u] - atom.x;
      e[u] += atom.w * rsqrt(dx * dx + dyz2);
    }
  }
#pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    int i = i0 + u * bx;
    if (i < gx) grid[j * gx + i] += e[u];
  }
}

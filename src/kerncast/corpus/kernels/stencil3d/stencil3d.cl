// 7-point stencil on an nx x ny x nz float32 grid (x fastest):
//   out = c0 * in + c1 * (sum of the six face neighbours)   in the interior,
//   out = in                                                 on the boundary faces.

__kernel void stencil7_naive(__global const float* restrict in, __global float* restrict out,
                             int nx, int ny, int nz, float c0, float c1) {
  int x = get_global_id(0);
  int y = get_global_id(1);
  int z = get_global_id(2);
  if (x >= nx || y >= ny || z >= nz) return;
  int plane = nx * ny;
  int idx = z * plane + y * nx + x;
  float centre = in[idx];
  if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
    out[idx] = centre;
    return;
  }
  float sum = in[idx - 1] + in[idx + 1] + in[idx - nx] + in[idx + nx] + in[idx - plane] + in[idx + plane];
  out[idx] = c0 * centre + c1 * sum;
}

#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 8
#endif
#ifndef ZCH
#define ZCH 64
#endif

// A 2-D work-group marches up z through a chunk of ZCH planes. The z neighbours of a
// work-item's column travel in registers (below, centre, above); the current xy plane
// is staged in local memory with a one-cell halo for the x and y neighbours.
__kernel void stencil7_march(__global const float* restrict in, __global float* restrict out,
                             int nx, int ny, int nz, float c0, float c1) {
  __local float tile[BY + 2][BX + 2];
  int tx = get_local_id(0), ty = get_local_id(1);
  int x = get_group_id(0) * BX + tx, y = get_group_id(1) * BY + ty;
  int z0 = get_group_id(2) * ZCH;
  int z1 = min(z0 + ZCH, nz);
  int plane = nx * ny;
  bool inside = x < nx && y < ny;
  int idx = z0 * plane + y * nx + x;
  float below = (inside && z0 > 0) ? in[idx - plane] : 0.0f;
  float centre = inside ? in[idx] : 0.0f;
  for (int z = z0; z < z1; z++, idx += plane) {
    float above = (inside && z + 1 < nz) ? in[idx + plane] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous plane's readers are done
    tile[ty + 1][tx + 1] = centre;
    if (tx == 0) tile[ty + 1][0] = (x > 0 && y < ny) ? in[idx - 1] : 0.0f;
    if (tx == BX - 1) tile[ty + 1][BX + 1] = (x + 1 < nx && y < ny) ? in[idx + 1] : 0.0f;
    if (ty == 0) tile[0][tx + 1] = (y > 0 && x < nx) ? in[idx - nx] : 0.0f;
    if (ty == BY - 1) tile[BY + 1][tx + 1] = (y + 1 < ny && x < nx) ? in[idx + nx] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (inside) {
      bool interior = x > 0 && y > 0 && z > 0 && x < nx - 1 && y < ny - 1 && z < nz - 1;
      float sum = tile[ty + 1][tx] + tile[ty + 1][tx + 2] + tile[ty][tx + 1] + tile[ty + 2][tx + 1] +
                  below + above;
      out[idx] = interior ? c0 * centre + c1 * sum : centre;
    }
    below = centre;
    centre = above;
  }
}

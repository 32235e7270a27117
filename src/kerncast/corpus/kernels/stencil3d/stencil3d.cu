// 7-point stencil on an nx x ny x nz float32 grid (x fastest):
//   out = c0 * in + c1 * (sum of the six face neighbours)   in the interior,
//   out = in                                                 on the boundary faces.

extern "C" __global__ void stencil7_naive(const float* __restrict__ in, float* __restrict__ out,
                                          int nx, int ny, int nz, float c0, float c1) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
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

// A 2-D block marches up z through a chunk of ZCH planes. The z neighbours of a
// thread's column travel in registers (below, centre, above); the current xy plane is
// staged in shared memory with a one-cell halo for the x and y neighbours.
extern "C" __global__ void stencil7_march(const float* __restrict__ in, float* __restrict__ out,
                                          int nx, int ny, int nz, float c0, float c1) {
  __shared__ float tile[BY + 2][BX + 2];
  int tx = threadIdx.x, ty = threadIdx.y;
  int x = blockIdx.x * BX + tx, y = blockIdx.y * BY + ty;
  int z0 = blockIdx.z * ZCH;
  int z1 = min(z0 + ZCH, nz);
  int plane = nx * ny;
  bool inside = x < nx && y < ny;
  int idx = z0 * plane + y * nx + x;
  float below = (inside && z0 > 0) ? in[idx - plane] : 0.0f;
  float centre = inside ? in[idx] : 0.0f;
  for (int z = z0; z < z1; z++, idx += plane) {
    float above = (inside && z + 1 < nz) ? in[idx + plane] : 0.0f;
    __syncthreads();  // the previous plane's readers are done
    tile[ty + 1][tx + 1] = centre;
    if (tx == 0) tile[ty + 1][0] = (x > 0 && y < ny) ? in[idx - 1] : 0.0f;
    if (tx == BX - 1) tile[ty + 1][BX + 1] = (x + 1 < nx && y < ny) ? in[idx + 1] : 0.0f;
    if (ty == 0) tile[0][tx + 1] = (y > 0 && x < nx) ? in[idx - nx] : 0.0f;
    if (ty == BY - 1) tile[BY + 1][tx + 1] = (y + 1 < ny && x < nx) ? in[idx + nx] : 0.0f;
    __syncthreads();
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

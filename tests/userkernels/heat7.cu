// One Jacobi step of the 3-D heat equation with a 7-point stencil on an nx*ny*nz volume
// (x fastest). Boundary cells keep their value; interior cells become
// c0 * u + c1 * (sum of the six face neighbours).
extern "C" __global__ void heat7(float* __restrict__ out, const float* __restrict__ in,
                                 int nx, int ny, int nz, float c0, float c1) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  long plane = (long)nx * ny;
  long i = z * plane + (long)y * nx + x;
  float u = in[i];
  if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
    out[i] = u;
    return;
  }
  float around = in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - plane] + in[i + plane];
  out[i] = c0 * u + c1 * around;
}

// One explicit diffusion step on a rows x cols image, in the style of Rodinia's SRAD/
// hotspot hosts that pass "J + cols + 1": the caller hands the kernel pointers to the
// first interior pixel of J and of D (Jc, Dc) as well as the arrays themselves.
// Threads cover the whole image; a border pixel is copied through J/D, an interior pixel
// is updated through Jc/Dc, whose neighbours lie at -1, +1, -cols and +cols (so the
// kernel reads in front of the pointer it was given).
extern "C" __global__ void diffuse_interior(int rows, int cols, float lambda,
                                            const float* __restrict__ J,
                                            const float* __restrict__ Jc,
                                            float* __restrict__ D, float* __restrict__ Dc) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= cols || y >= rows) return;
  if (x == 0 || y == 0 || x == cols - 1 || y == rows - 1) {
    D[y * cols + x] = J[y * cols + x];
    return;
  }
  int k = (y - 1) * cols + (x - 1);  // index relative to the interior pointers
  float c = Jc[k];
  float lap = Jc[k - 1] + Jc[k + 1] + Jc[k - cols] + Jc[k + cols] - 4.0f * c;
  Dc[k] = c + lambda * lap;
}

// One iteration of speckle-reducing anisotropic diffusion (SRAD, Yu and Acton 2002)
// on a rows x cols float32 intensity image with reflecting (Neumann) edges:
// a neighbour outside the image is the pixel itself.
//
// srad_coefficients: with dN, dS, dW, dE the differences of the four neighbours to
// the centre intensity I,
//   g2 = (dN^2 + dS^2 + dW^2 + dE^2) / I^2      lap = (dN + dS + dW + dE) / I
//   q^2 = (g2 / 2 - lap^2 / 16) / (1 + lap / 4)^2          (instantaneous coefficient of variation)
//   c = 1 / (1 + (q^2 - q0^2) / (q0^2 (1 + q0^2)))  clamped to [0, 1]
// srad_apply: the divergence of c grad I, with the coefficient of the south and east
// neighbours for their faces and the pixel's own for the north and west faces,
//   I' = I + step * (cS dS + cE dE + c dN + c dW)             (step = dt / 4)

extern "C" __global__ void srad_coefficients(const float* __restrict__ img, float* __restrict__ coef,
                                             int rows, int cols, float q0sq) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  int idx = r * cols + c;
  float ic = img[idx];
  float dn = img[max(r - 1, 0) * cols + c] - ic;
  float ds = img[min(r + 1, rows - 1) * cols + c] - ic;
  float dw = img[r * cols + max(c - 1, 0)] - ic;
  float de = img[r * cols + min(c + 1, cols - 1)] - ic;
  float g2 = (dn * dn + ds * ds + dw * dw + de * de) / (ic * ic);
  float lap = (dn + ds + dw + de) / ic;
  float num = 0.5f * g2 - 0.0625f * lap * lap;
  float den = 1.0f + 0.25f * lap;
  float qsq = num / (den * den);
  float value = 1.0f / (1.0f + (qsq - q0sq) / (q0sq * (1.0f + q0sq)));
  coef[idx] = fminf(fmaxf(value, 0.0f), 1.0f);
}

extern "C" __global__ void srad_apply(const float* __restrict__ img, const float* __restrict__ coef,
                                      float* __restrict__ out, int rows, int cols, float step) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  int idx = r * cols + c;
  int south = min(r + 1, rows - 1) * cols + c;
  int east = r * cols + min(c + 1, cols - 1);
  float ic = img[idx];
  float cc = coef[idx];
  float flux = coef[south] * (img[south] - ic) + coef[east] * (img[east] - ic) +
               cc * (img[max(r - 1, 0) * cols + c] - ic) + cc * (img[r * cols + max(c - 1, 0)] - ic);
  out[idx] = ic + step * flux;
}

// One explicit time step of a compact thermal model of a chip: every cell of a
// rows x cols grid exchanges heat with its four neighbours (conductances gx, gy),
// with the heat sink at t_amb (conductance gz), and gains its dissipated power:
//   T' = T + cap_inv * (P + gx*((Te-T) + (Tw-T)) + gy*((Tn-T) + (Ts-T)) + gz*(t_amb-T))
// The die's edges are adiabatic: a neighbour outside the grid has the cell's own
// temperature.

extern "C" __global__ void thermal_step(const float* __restrict__ temp, const float* __restrict__ power,
                                        float* __restrict__ out, int rows, int cols, float cap_inv,
                                        float gx, float gy, float gz, float t_amb) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  int idx = r * cols + c;
  float tc = temp[idx];
  float tn = r > 0 ? temp[idx - cols] : tc;
  float ts = r < rows - 1 ? temp[idx + cols] : tc;
  float tw = c > 0 ? temp[idx - 1] : tc;
  float te = c < cols - 1 ? temp[idx + 1] : tc;
  float flow = gx * ((te - tc) + (tw - tc)) + gy * ((tn - tc) + (ts - tc)) + gz * (t_amb - tc);
  out[idx] = tc + cap_inv * (power[idx] + flow);
}

#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 8
#endif
#ifndef RPT
#define RPT 1
#endif
#define TH (BY * RPT)

// The same step from a shared-memory tile: a block stages a (TH + 2) x (BX + 2) tile of
// temperatures with a one-cell halo (clamped at the die's edges, which gives the
// adiabatic boundary), then each thread updates RPT cells BY rows apart.
extern "C" __global__ void thermal_tiled(const float* __restrict__ temp, const float* __restrict__ power,
                                         float* __restrict__ out, int rows, int cols, float cap_inv,
                                         float gx, float gy, float gz, float t_amb) {
  __shared__ float tile[TH + 2][BX + 2];
  int tx = threadIdx.x, ty = threadIdx.y;
  int r0 = blockIdx.y * TH, c0 = blockIdx.x * BX;
  for (int e = ty * BX + tx; e < (TH + 2) * (BX + 2); e += BX * BY) {
    int lr = e / (BX + 2), lc = e % (BX + 2);
    int gr = min(max(r0 + lr - 1, 0), rows - 1);
    int gc = min(max(c0 + lc - 1, 0), cols - 1);
    tile[lr][lc] = temp[gr * cols + gc];
  }
  __syncthreads();
  int c = c0 + tx;
#pragma unroll
  for (int i = 0; i < RPT; i++) {
    int lr = ty + i * BY;
    int r = r0 + lr;
    if (r < rows && c < cols) {
      float tc = tile[lr + 1][tx + 1];
      float tn = tile[lr][tx + 1], ts = tile[lr + 2][tx + 1];
      float tw = tile[lr + 1][tx], te = tile[lr + 1][tx + 2];
      float flow = gx * ((te - tc) + (tw - tc)) + gy * ((tn - tc) + (ts - tc)) + gz * (t_amb - tc);
      out[r * cols + c] = tc + cap_inv * (power[r * cols + c] + flow);
    }
  }
}

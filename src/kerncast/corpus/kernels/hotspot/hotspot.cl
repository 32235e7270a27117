// One explicit time step of a compact thermal model of a chip: every cell of a
// rows x cols grid exchanges heat with its four neighbours (conductances gx, gy),
// with the heat sink at t_amb (conductance gz), and gains its dissipated power:
//   T' = T + cap_inv * (P + gx*((Te-T) + (Tw-T)) + gy*((Tn-T) + (Ts-T)) + gz*(t_amb-T))
// The die's edges are adiabatic: a neighbour outside the grid has the cell's own
// temperature.

__kernel void thermal_step(__global const float* restrict temp, __global const float* restrict power,
                           __global float* restrict out, int rows, int cols, float cap_inv,
                           float gx, float gy, float gz, float t_amb) {
  int c = get_global_id(0);
  int r = get_global_id(1);
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

// The same step from a local-memory tile: a work-group stages a (TH + 2) x (BX + 2)
// tile of temperatures with a one-cell halo (clamped at the die's edges, which gives
// the adiabatic boundary), then each work-item updates RPT cells BY rows apart.
__kernel void thermal_tiled(__global const float* restrict temp, __global const float* restrict power,
                            __global float* restrict out, int rows, int cols, float cap_inv,
                            float gx, float gy, float gz, float t_amb) {
  __local float tile[TH + 2][BX + 2];
  int tx = get_local_id(0), ty = get_local_id(1);
  int r0 = get_group_id(1) * TH, c0 = get_group_id(0) * BX;
  for (int e = ty * BX + tx; e < (TH + 2) * (BX + 2); e += BX * BY) {
    int lr = e / (BX + 2), lc = e % (BX + 2);
    int gr = min(max(r0 + lr - 1, 0), rows - 1);
    int gc = min(max(c0 + lc - 1, 0), cols - 1);
    tile[lr][lc] = temp[gr * cols + gc];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
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

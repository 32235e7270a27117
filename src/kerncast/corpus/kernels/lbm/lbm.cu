// One fused stream-and-collide step of the D2Q9 lattice Boltzmann method with the
// BGK collision operator, on a periodic nx x ny lattice. Populations are stored as
// nine planes (structure of arrays): f[q * nx * ny + y * nx + x].
// Velocities e_q: 0 (0,0); 1 (1,0); 2 (0,1); 3 (-1,0); 4 (0,-1);
//                 5 (1,1); 6 (-1,1); 7 (-1,-1); 8 (1,-1).
// Weights: 4/9 (rest), 1/9 (axes), 1/36 (diagonals).
// Each thread pulls the populations arriving at its cell, f_q(x) = fin_q(x - e_q), computes
// density and velocity, and relaxes towards equilibrium:
//   fout_q = f_q - omega * (f_q - feq_q),  feq_q = w_q rho (1 + 3 e.u + 4.5 (e.u)^2 - 1.5 u.u)

extern "C" __global__ void lbm_d2q9_step(const float* __restrict__ fin, float* __restrict__ fout,
                                         int nx, int ny, float omega) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  int n = nx * ny;
  int xm = x == 0 ? nx - 1 : x - 1, xp = x == nx - 1 ? 0 : x + 1;
  int ym = (y == 0 ? ny - 1 : y - 1) * nx, yp = (y == ny - 1 ? 0 : y + 1) * nx, yc = y * nx;
  float f0 = fin[yc + x];
  float f1 = fin[1 * n + yc + xm];
  float f2 = fin[2 * n + ym + x];
  float f3 = fin[3 * n + yc + xp];
  float f4 = fin[4 * n + yp + x];
  float f5 = fin[5 * n + ym + xm];
  float f6 = fin[6 * n + ym + xp];
  float f7 = fin[7 * n + yp + xp];
  float f8 = fin[8 * n + yp + xm];
  float rho = f0 + f1 + f2 + f3 + f4 + f5 + f6 + f7 + f8;
  float inv = 1.0f / rho;
  float ux = (f1 - f3 + f5 - f6 - f7 + f8) * inv;
  float uy = (f2 - f4 + f5 + f6 - f7 - f8) * inv;
  float usq = 1.5f * (ux * ux + uy * uy);
  float ra = rho * (1.0f / 9.0f), rd = rho * (1.0f / 36.0f);
  int idx = yc + x;
  fout[idx] = f0 - omega * (f0 - rho * (4.0f / 9.0f) * (1.0f - usq));
  float eu;
  eu = ux;
  fout[1 * n + idx] = f1 - omega * (f1 - ra * (1.0f + 3.0f * eu + 4.5f * eu * eu - usq));
  eu = uy;
  fout[2 * n + idx] = f2 - omega * (f2 - ra * (1.0f + 3.0f * eu + 4.5f * eu * eu - usq));
  eu = -ux;
  fout[3 * n + idx] = f3 - omega * (f3 - ra * (1.0f + 3.0f * eu + 4.5f * eu * eu - usq));
  eu = -uy;
  fout[4 * n + idx] = f4 - omega * (f4 - ra * (1.0f + 3.0f * eu + 4.5f * eu * eu - usq));
  eu = ux + uy;
  fout[5 * n + idx] = f5 - omega * (f5 - rd * (1.0f + 3.0f * eu + 4.5f * eu * eu - usq));
  eu = uy - ux;
  fout[6 * n + idx] = f6 - omega * (f6 - rd * (1.0f + 3.0f * eu + 4.5f * eu * eu - usq));
  eu = -ux - uy;
  fout[7 * n + idx] = f7 - omega * (f7 - rd * (1.0f + 3.0f * eu + 4.5f * eu * eu - usq));
  eu = ux - uy;
  fout[8 * n + idx] = f8 - omega * (f8 - rd * (1.0f + 3.0f * eu + 4.5f * eu * eu - usq));
}

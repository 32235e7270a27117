// Matrix-vector product y = A x (A: m x n float32): thread per row on a row-major
// matrix, thread per row on a column-major copy, and a slice of BX lanes per row.

#ifndef UNROLL
#define UNROLL 1
#endif

// One thread per row, reading its row of a row-major A: neighbouring threads read
// addresses n floats apart. UNROLL independent partial sums give loads in flight.
extern "C" __global__ void matvec_rowwise(const float* __restrict__ a, const float* __restrict__ x,
                                          float* __restrict__ y, int m, int n) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= m) return;
  const float* arow = a + row * n;
  float acc[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; u++) acc[u] = 0.0f;
  int k = 0;
  for (; k + UNROLL <= n; k += UNROLL) {
#pragma unroll
    for (int u = 0; u < UNROLL; u++) acc[u] += arow[k + u] * x[k + u];
  }
  for (; k < n; k++) acc[0] += arow[k] * x[k];
  float sum = 0.0f;
#pragma unroll
  for (int u = 0; u < UNROLL; u++) sum += acc[u];
  y[row] = sum;
}

// One thread per row of a column-major A (at[k * m + row]): a warp reads 32
// consecutive floats of one column per step.
extern "C" __global__ void matvec_colmajor(const float* __restrict__ at, const float* __restrict__ x,
                                           float* __restrict__ y, int m, int n) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= m) return;
  float acc[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; u++) acc[u] = 0.0f;
  int k = 0;
  for (; k + UNROLL <= n; k += UNROLL) {
#pragma unroll
    for (int u = 0; u < UNROLL; u++) acc[u] += at[(k + u) * m + row] * x[k + u];
  }
  for (; k < n; k++) acc[0] += at[k * m + row] * x[k];
  float sum = 0.0f;
#pragma unroll
  for (int u = 0; u < UNROLL; u++) sum += acc[u];
  y[row] = sum;
}

#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 4
#endif

// BX lanes share a row (BY rows per block): each lane sums every BX-th element of
// the row, then a shared-memory tree combines the BX partial sums.
extern "C" __global__ void matvec_warp_row(const float* __restrict__ a, const float* __restrict__ x,
                                           float* __restrict__ y, int m, int n) {
  __shared__ float part[BY][BX];
  int lane = threadIdx.x, r = threadIdx.y;
  int row = blockIdx.y * BY + r;
  float acc = 0.0f;
  if (row < m) {
    const float* arow = a + row * n;
    for (int k = lane; k < n; k += BX) acc += arow[k] * x[k];
  }
  part[r][lane] = acc;
  __syncthreads();
  for (int s = BX / 2; s > 0; s >>= 1) {
    if (lane < s) part[r][lane] += part[r][lane + s];
    __syncthreads();
  }
  if (lane == 0 && row < m) y[row] = part[r][0];
}

// One step of Gaussian elimination without pivoting on an n x n float32 system
// A x = b (row-major), at pivot k: the column of multipliers, then the rank-1 update
// of the trailing submatrix and the right-hand side.

#ifndef RPT
#define RPT 1
#endif

// mult[i - k - 1] = A[i][k] / A[k][k] for the rows i > k. Each block handles
// blockDim.x * RPT consecutive rows, each thread RPT of them (blockDim.x apart);
// the reads walk down a column, n floats apart.
extern "C" __global__ void gauss_multipliers(const float* __restrict__ a, float* __restrict__ mult,
                                             int n, int k) {
  float pivot = a[k * n + k];
  int first = k + 1 + blockIdx.x * blockDim.x * RPT + threadIdx.x;
#pragma unroll
  for (int r = 0; r < RPT; r++) {
    int i = first + r * blockDim.x;
    if (i < n) mult[i - k - 1] = a[i * n + k] / pivot;
  }
}

// A[i][j] -= mult[i] * A[k][j] for i > k, j > k; A[i][k] = 0; b[i] -= mult[i] * b[k].
// Threads span the columns j = k .. n-1 (the thread of column k updates b and clears
// A[i][k]); each thread updates RPT rows blockDim.y apart and keeps A[k][j] in a register.
extern "C" __global__ void gauss_update(float* __restrict__ a, float* __restrict__ b,
                                        const float* __restrict__ mult, int n, int k) {
  int j = k + blockIdx.x * blockDim.x + threadIdx.x;
  int first = k + 1 + blockIdx.y * blockDim.y * RPT + threadIdx.y;
  if (j >= n) return;
  if (j == k) {
    float bk = b[k];
#pragma unroll
    for (int r = 0; r < RPT; r++) {
      int i = first + r * blockDim.y;
      if (i < n) {
        b[i] -= mult[i - k - 1] * bk;
        a[i * n + k] = 0.0f;
      }
    }
  } else {
    float pivot_row = a[k * n + j];
#pragma unroll
    for (int r = 0; r < RPT; r++) {
      int i = first + r * blockDim.y;
      if (i < n) a[i * n + j] -= mult[i - k - 1] * pivot_row;
    }
  }
}

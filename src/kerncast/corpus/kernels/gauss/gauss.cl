// One step of Gaussian elimination without pivoting on an n x n float32 system
// A x = b (row-major), at pivot k: the column of multipliers, then the rank-1 update
// of the trailing submatrix and the right-hand side.

#ifndef RPT
#define RPT 1
#endif

// mult[i - k - 1] = A[i][k] / A[k][k] for the rows i > k. Each work-group handles
// local_size * RPT consecutive rows, each work-item RPT of them (local_size apart);
// the reads walk down a column, n floats apart.
__kernel void gauss_multipliers(__global const float* restrict a, __global float* restrict mult,
                                int n, int k) {
  float pivot = a[k * n + k];
  int bx = get_local_size(0);
  int first = k + 1 + get_group_id(0) * bx * RPT + get_local_id(0);
#pragma unroll
  for (int r = 0; r < RPT; r++) {
    int i = first + r * bx;
    if (i < n) mult[i - k - 1] = a[i * n + k] / pivot;
  }
}

// A[i][j] -= mult[i] * A[k][j] for i > k, j > k; A[i][k] = 0; b[i] -= mult[i] * b[k].
// Work-items span the columns j = k .. n-1 (the one of column k updates b and clears
// A[i][k]); each updates RPT rows local_size(1) apart and keeps A[k][j] in a register.
__kernel void gauss_update(__global float* restrict a, __global float* restrict b,
                           __global const float* restrict mult, int n, int k) {
  int by = get_local_size(1);
  int j = k + get_group_id(0) * get_local_size(0) + get_local_id(0);
  int first = k + 1 + get_group_id(1) * by * RPT + get_local_id(1);
  if (j >= n) return;
  if (j == k) {
    float bk = b[k];
#pragma unroll
    for (int r = 0; r < RPT; r++) {
      int i = first + r * by;
      if (i < n) {
        b[i] -= mult[i - k - 1] * bk;
        a[i * n + k] = 0.0f;
      }
    }
  } else {
    float pivot_row = a[k * n + j];
#pragma unroll
    for (int r = 0; r < RPT; r++) {
      int i = first + r * by;
      if (i < n) a[i * n + j] -= mult[i - k - 1] * pivot_row;
    }
  }
}

// Matrix-vector product y = A x (A: m x n float32): thread per row on a row-major
// matrix, thread per row on a column-major copy, and a slice of BX lanes per row.

#ifndef UNROLL
#define UNROLL 1
#endif

// One work-item per row, reading its row of a row-major A: neighbouring work-items
// read addresses n floats apart. UNROLL independent partial sums give loads in flight.
__kernel void matvec_rowwise(__global const float* restrict a, __global const float* restrict x,
                             __global float* restrict y, int m, int n) {
  int row = get_global_id(0);
  if (row >= m) return;
  __global const float* arow = a + row * n;
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

// One work-item per row of a column-major A (at[k * m + row]): 32 neighbouring
// work-items read 32 consecutive floats of one column per step.
__kernel void matvec_colmajor(__global const float* restrict at, __global const float* restrict x,
                              __global float* restrict y, int m, int n) {
  int row = get_global_id(0);
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

// BX lanes share a row (BY rows per work-group): each lane sums every BX-th element
// of the row, then a local-memory tree combines the BX partial sums.
__kernel void matvec_warp_row(__global const float* restrict a, __global const float* restrict x,
                              __global float* restrict y, int m, int n) {
  __local float part[BY][BX];
  int lane = get_local_id(0), r = get_local_id(1);
  int row = get_group_id(1) * BY + r;
  float acc = 0.0f;
  if (row < m) {
    __global const float* arow = a + row * n;
    for (int k = lane; k < n; k += BX) acc += arow[k] * x[k];
  }
  part[r][lane] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = BX / 2; s > 0; s >>= 1) {
    if (lane < s) part[r][lane] += part[r][lane + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane == 0 && row < m) y[row] = part[r][0];
}

// Sparse matrix-vector product y = A x in float32: CSR (scalar and vector) and ELLPACK.

#ifndef RPT
#define RPT 1  // rows per work-item (scalar CSR and ELLPACK), the group size apart
#endif
#ifndef BLOCK
#define BLOCK 256  // work-items per group (vector CSR)
#endif
#ifndef GROUP
#define GROUP 8  // work-items per row (vector CSR), a power of two <= 32
#endif

// One work-item per row.
__kernel void spmv_csr_scalar(__global const int* restrict row_ptr,
                              __global const int* restrict cols,
                              __global const float* restrict vals,
                              __global const float* restrict x, __global float* restrict y,
                              int rows) {
  int first = get_group_id(0) * get_local_size(0) * RPT + get_local_id(0);
#pragma unroll
  for (int j = 0; j < RPT; j++) {
    int row = first + j * (int)get_local_size(0);
    if (row < rows) {
      float sum = 0.0f;
      int end = row_ptr[row + 1];
      for (int e = row_ptr[row]; e < end; e++) sum += vals[e] * x[cols[e]];
      y[row] = sum;
    }
  }
}

// GROUP consecutive work-items per row, partial sums added in local memory.
__kernel void spmv_csr_vector(__global const int* restrict row_ptr,
                              __global const int* restrict cols,
                              __global const float* restrict vals,
                              __global const float* restrict x, __global float* restrict y,
                              int rows) {
  __local float partial[BLOCK];
  int tid = get_local_id(0);
  int lane = tid % GROUP;
  int row = (get_group_id(0) * BLOCK + tid) / GROUP;
  float sum = 0.0f;
  if (row < rows) {
    int end = row_ptr[row + 1];
    for (int e = row_ptr[row] + lane; e < end; e += GROUP) sum += vals[e] * x[cols[e]];
  }
  partial[tid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int s = GROUP / 2; s > 0; s >>= 1) {
    if (lane < s) partial[tid] += partial[tid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane == 0 && row < rows) y[row] = partial[tid];
}

// ELLPACK, column-major, padding entries with column -1.
__kernel void spmv_ell(__global const int* restrict cols, __global const float* restrict vals,
                       __global const float* restrict x, __global float* restrict y, int rows,
                       int width) {
  int first = get_group_id(0) * get_local_size(0) * RPT + get_local_id(0);
#pragma unroll
  for (int j = 0; j < RPT; j++) {
    int row = first + j * (int)get_local_size(0);
    if (row < rows) {
      float sum = 0.0f;
      for (int k = 0; k < width; k++) {
        int c = cols[k * rows + row];
        if (c >= 0) sum += vals[k * rows + row] * x[c];
      }
      y[row] = sum;
    }
  }
}

// Sparse matrix-vector product y = A x in float32: CSR (scalar and vector) and ELLPACK.

#ifndef RPT
#define RPT 1  // rows per thread (scalar CSR and ELLPACK), blockDim apart
#endif
#ifndef BLOCK
#define BLOCK 256  // threads per block (vector CSR)
#endif
#ifndef GROUP
#define GROUP 8  // threads per row (vector CSR), a power of two <= 32
#endif

// One thread per row: each thread walks its row's entries, so a warp's loads touch
// as many different rows as it has threads.
extern "C" __global__ void spmv_csr_scalar(const int* __restrict__ row_ptr,
                                           const int* __restrict__ cols,
                                           const float* __restrict__ vals,
                                           const float* __restrict__ x, float* __restrict__ y,
                                           int rows) {
  int first = blockIdx.x * blockDim.x * RPT + threadIdx.x;
#pragma unroll
  for (int j = 0; j < RPT; j++) {
    int row = first + j * blockDim.x;
    if (row < rows) {
      float sum = 0.0f;
      int end = row_ptr[row + 1];
      for (int e = row_ptr[row]; e < end; e++) sum += vals[e] * x[cols[e]];
      y[row] = sum;
    }
  }
}

// GROUP consecutive threads per row: they stride through the row together (coalesced)
// and add their partial sums in shared memory.
extern "C" __global__ void spmv_csr_vector(const int* __restrict__ row_ptr,
                                           const int* __restrict__ cols,
                                           const float* __restrict__ vals,
                                           const float* __restrict__ x, float* __restrict__ y,
                                           int rows) {
  __shared__ float partial[BLOCK];
  int tid = threadIdx.x;
  int lane = tid % GROUP;
  int row = (blockIdx.x * BLOCK + tid) / GROUP;
  float sum = 0.0f;
  if (row < rows) {
    int end = row_ptr[row + 1];
    for (int e = row_ptr[row] + lane; e < end; e += GROUP) sum += vals[e] * x[cols[e]];
  }
  partial[tid] = sum;
  __syncthreads();
#pragma unroll
  for (int s = GROUP / 2; s > 0; s >>= 1) {
    if (lane < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (lane == 0 && row < rows) y[row] = partial[tid];
}

// ELLPACK, column-major: entry k of row r at k * rows + r, so consecutive threads
// read consecutive words; padding entries have column -1.
extern "C" __global__ void spmv_ell(const int* __restrict__ cols, const float* __restrict__ vals,
                                    const float* __restrict__ x, float* __restrict__ y, int rows,
                                    int width) {
  int first = blockIdx.x * blockDim.x * RPT + threadIdx.x;
#pragma unroll
  for (int j = 0; j < RPT; j++) {
    int row = first + j * blockDim.x;
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

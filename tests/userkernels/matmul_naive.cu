// Named like the corpus's matmul_naive, but a different kernel: double-precision
// C = alpha * A * B + beta * C for an M x K times K x N product, with leading dimensions
// (A and B are padded row-major arrays), one output element per thread, x over columns.
extern "C" __global__ void matmul_naive(int M, int N, int K, double alpha,
                                        const double* __restrict__ A, int lda,
                                        const double* __restrict__ B, int ldb, double beta,
                                        double* __restrict__ C, int ldc) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  double acc = 0.0;
  for (int k = 0; k < K; ++k) {
    acc += A[row * lda + k] * B[k * ldb + col];
  }
  C[row * ldc + col] = alpha * acc + beta * C[row * ldc + col];
}

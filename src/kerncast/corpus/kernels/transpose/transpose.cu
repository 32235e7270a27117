// Out-of-place matrix transpose: out (cols x rows) = in (rows x cols)^T, float32.

// One thread per element: reads along a row (coalesced), writes down a column
// (each warp's stores land rows floats apart).
extern "C" __global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out,
                                           int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}

#ifndef TILE
#define TILE 32
#endif
#ifndef RPT
#define RPT 4
#endif
#ifndef PAD
#define PAD 1
#endif
#define TROWS (TILE / RPT)

// A TILE x TILE tile staged in shared memory so that both the loads and the stores
// are row-wise; each thread moves RPT elements of the tile (rows TROWS apart).
// PAD = 1 shifts each tile row by one bank so the column reads are conflict-free.
extern "C" __global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out,
                                           int rows, int cols) {
  __shared__ float tile[TILE][TILE + PAD];
  int tx = threadIdx.x, ty = threadIdx.y;
  int c0 = blockIdx.x * TILE, r0 = blockIdx.y * TILE;
#pragma unroll
  for (int i = 0; i < RPT; i++) {
    int j = ty + i * TROWS;
    int r = r0 + j, c = c0 + tx;
    if (r < rows && c < cols) tile[j][tx] = in[r * cols + c];
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < RPT; i++) {
    int j = ty + i * TROWS;
    int orow = c0 + j, ocol = r0 + tx;
    if (orow < cols && ocol < rows) out[orow * rows + ocol] = tile[tx][j];
  }
}

// Out-of-place transpose of a rows x cols row-major matrix through a 32 x 33 shared tile
// (the extra column keeps the column reads free of bank conflicts). Blocks are 32 x 8;
// each thread moves four elements in and four out.
#define TILE 32
#define ROWS_PER_PASS 8

extern "C" __global__ void tile_transpose(float* __restrict__ dst, const float* __restrict__ src,
                                          int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;  // column in src
  int y = blockIdx.y * TILE + threadIdx.y;  // row in src
  for (int k = 0; k < TILE; k += ROWS_PER_PASS) {
    if (x < cols && y + k < rows) {
      tile[threadIdx.y + k][threadIdx.x] = src[(size_t)(y + k) * cols + x];
    }
  }
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;  // column in dst (= row in src)
  y = blockIdx.x * TILE + threadIdx.y;  // row in dst (= column in src)
  for (int k = 0; k < TILE; k += ROWS_PER_PASS) {
    if (x < rows && y + k < cols) {
      dst[(size_t)(y + k) * rows + x] = tile[threadIdx.x][threadIdx.y + k];
    }
  }
}

// Out-of-place matrix transpose: out (cols x rows) = in (rows x cols)^T, float32.

// One work-item per element: reads along a row (coalesced), writes down a column
// (neighbouring work-items' stores land rows floats apart).
__kernel void transpose_naive(__global const float* restrict in, __global float* restrict out,
                              int rows, int cols) {
  int c = get_global_id(0);
  int r = get_global_id(1);
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

// A TILE x TILE tile staged in local memory so that both the loads and the stores
// are row-wise; each work-item moves RPT elements of the tile (rows TROWS apart).
// PAD = 1 shifts each tile row by one bank so the column reads are conflict-free.
__kernel void transpose_tiled(__global const float* restrict in, __global float* restrict out,
                              int rows, int cols) {
  __local float tile[TILE][TILE + PAD];
  int tx = get_local_id(0), ty = get_local_id(1);
  int c0 = get_group_id(0) * TILE, r0 = get_group_id(1) * TILE;
#pragma unroll
  for (int i = 0; i < RPT; i++) {
    int j = ty + i * TROWS;
    int r = r0 + j, c = c0 + tx;
    if (r < rows && c < cols) tile[j][tx] = in[r * cols + c];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int i = 0; i < RPT; i++) {
    int j = ty + i * TROWS;
    int orow = c0 + j, ocol = r0 + tx;
    if (orow < cols && ocol < rows) out[orow * rows + ocol] = tile[tx][j];
  }
}

// Pathfinder: dynamic programming over a grid of step costs, advancing the cost row by
// PYR rows per launch with a shrinking pyramid of valid columns in local memory.

#ifndef BLOCK
#define BLOCK 256  // work-items per group
#endif
#ifndef PYR
#define PYR 16  // rows per launch (pyramid height)
#endif
#define BIG 0x3FFFFFFF  // cost of the virtual columns beyond the edges

__kernel void pathfinder_rows(__global const int* restrict wall,
                              __global const int* restrict src, __global int* restrict dst,
                              int cols) {
  __local int prev[BLOCK];
  __local int next[BLOCK];
  int tx = get_local_id(0);
  int col = get_group_id(0) * (BLOCK - 2 * PYR) - PYR + tx;
  int inside = col >= 0 && col < cols;
  prev[tx] = inside ? src[col] : BIG;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = 0; i < PYR; i++) {
    int live = inside && tx >= i + 1 && tx <= BLOCK - 2 - i;
    if (live) {
      int best = min(prev[tx], min(prev[tx - 1], prev[tx + 1]));
      next[tx] = best + wall[i * cols + col];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (live) prev[tx] = next[tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (inside && tx >= PYR && tx < BLOCK - PYR) dst[col] = prev[tx];
}

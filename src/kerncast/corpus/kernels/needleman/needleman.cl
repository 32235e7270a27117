// Needleman-Wunsch global alignment, blocked wavefront: one launch computes one tile
// anti-diagonal of the score matrices of a batch of sequence pairs. A group of TILE
// work-items owns a TILE x TILE tile (TPB tiles per work-group); work-item x owns
// column x and sweeps the tile's cell anti-diagonals (2 * TILE - 1 steps, one barrier
// each). Tile boundaries live in the linear-space arrays hb and vb, updated in place.

#ifndef TILE
#define TILE 32  // tile width and height = work-items per tile
#endif
#ifndef TPB
#define TPB 4  // tiles per work-group
#endif
#define ALPHABET 24

__kernel void nw_tile_diagonal(__global const char* restrict seq_a,
                               __global const char* restrict seq_b,
                               __global const int* restrict subst, __global int* hb,
                               __global int* vb, int n, int batch, int gap) {
  __local int table[ALPHABET * ALPHABET];
  __local int sa[TPB][TILE];
  __local int left[TPB][TILE + 1];
  __local int wave[2][TPB][TILE];
  __local int right[TPB][TILE];
  int lid = get_local_id(0);
  int g = lid / TILE, x = lid % TILE;
  int nt = n / TILE;
  int t = get_group_id(0) * TPB + g;
  int valid = t < batch * nt;
  int p = t / nt, ti = t % nt, tj = nt - 1 - ti;
  int hbase = (p * nt + tj) * (TILE + 1);
  int vbase = (p * nt + ti) * (TILE + 1);
  for (int k = lid; k < ALPHABET * ALPHABET; k += TILE * TPB) table[k] = subst[k];
  int up = 0, diag = 0, bj = 0;
  if (valid) {
    up = hb[hbase + x + 1];
    diag = hb[hbase + x];
    bj = seq_b[p * n + tj * TILE + x];
  }
  sa[g][x] = valid ? seq_a[p * n + ti * TILE + x] : 0;
  left[g][x] = valid ? vb[vbase + x] : 0;
  if (x == 0) left[g][TILE] = valid ? vb[vbase + TILE] : 0;
  int corner = up;
  // The boundaries are overwritten in place below: order the reads before the writes.
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  for (int s = 0; s < 2 * TILE - 1; s++) {
    int r = s - x;
    if (r >= 0 && r < TILE) {
      int l = (x == 0) ? left[g][r + 1] : wave[(s - 1) & 1][g][x - 1];
      int h = max(diag + table[sa[g][r] * ALPHABET + bj], max(up, l) - gap);
      diag = l;
      up = h;
      wave[s & 1][g][x] = h;
      if (x == TILE - 1) right[g][r] = h;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (valid) {
    hb[hbase + x + 1] = up;
    vb[vbase + x + 1] = right[g][x];
    if (x == 0) hb[hbase] = left[g][TILE];
    if (x == TILE - 1) vb[vbase] = corner;
  }
}

// Needleman-Wunsch global alignment, blocked wavefront: one launch computes one tile
// anti-diagonal of the score matrices of a batch of sequence pairs. A group of TILE
// threads owns a TILE x TILE tile (TPB tiles per block); thread x owns column x and
// sweeps the tile's cell anti-diagonals with the others (2 * TILE - 1 steps, one
// barrier each). The tile's top row and left column come from the linear-space
// boundary arrays hb and vb, which it overwrites with its bottom row and right column.

#ifndef TILE
#define TILE 32  // tile width and height = threads per tile
#endif
#ifndef TPB
#define TPB 4  // tiles per block
#endif
#define ALPHABET 24

extern "C" __global__ void nw_tile_diagonal(const signed char* __restrict__ seq_a,
                                            const signed char* __restrict__ seq_b,
                                            const int* __restrict__ subst, int* hb, int* vb,
                                            int n, int batch, int gap) {
  __shared__ int table[ALPHABET * ALPHABET];
  __shared__ int sa[TPB][TILE];          // residues of the tile's rows
  __shared__ int left[TPB][TILE + 1];    // column left of the tile (corner first)
  __shared__ int wave[2][TPB][TILE];     // last two cell anti-diagonals
  __shared__ int right[TPB][TILE];       // the tile's right column
  int g = threadIdx.x / TILE, x = threadIdx.x % TILE;
  int nt = n / TILE;
  int t = blockIdx.x * TPB + g;
  int valid = t < batch * nt;
  int p = t / nt, ti = t % nt, tj = nt - 1 - ti;
  int hbase = (p * nt + tj) * (TILE + 1);
  int vbase = (p * nt + ti) * (TILE + 1);
  for (int k = threadIdx.x; k < ALPHABET * ALPHABET; k += TILE * TPB) table[k] = subst[k];
  int up = 0, diag = 0, bj = 0;
  if (valid) {
    up = hb[hbase + x + 1];  // H[ti*T][tj*T + x + 1]
    diag = hb[hbase + x];    // H[ti*T][tj*T + x]
    bj = seq_b[p * n + tj * TILE + x];
  }
  sa[g][x] = valid ? seq_a[p * n + ti * TILE + x] : 0;
  left[g][x] = valid ? vb[vbase + x] : 0;
  if (x == 0) left[g][TILE] = valid ? vb[vbase + TILE] : 0;
  int corner = up;  // for x = TILE - 1: H[ti*T][(tj+1)*T], the corner of the next vb
  __syncthreads();
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
    __syncthreads();
  }
  if (valid) {
    hb[hbase + x + 1] = up;  // bottom row
    vb[vbase + x + 1] = right[g][x];
    if (x == 0) hb[hbase] = left[g][TILE];
    if (x == TILE - 1) vb[vbase] = corner;
  }
}

/* Needleman-Wunsch, one tile anti-diagonal of a batch of alignments, single-threaded:
 * each tile is swept row by row from its top row and left column. */
#include "kc_harness.h"

#define ALPHABET 24

static int max2(int a, int b) { return a > b ? a : b; }

__attribute__((noinline)) void roi_nw_tile_diagonal(const int8_t *seq_a, const int8_t *seq_b,
                                                    const int32_t *subst, int32_t *hb,
                                                    int32_t *vb, int n, int batch, int gap,
                                                    int tile) {
  int nt = n / tile;
  int row[65], right[64];
  for (int p = 0; p < batch; p++) {
    for (int ti = 0; ti < nt; ti++) {
      int tj = nt - 1 - ti;
      int32_t *h = hb + ((long)p * nt + tj) * (tile + 1);
      int32_t *v = vb + ((long)p * nt + ti) * (tile + 1);
      const int8_t *a = seq_a + (long)p * n + ti * tile;
      const int8_t *b = seq_b + (long)p * n + tj * tile;
      for (int c = 0; c <= tile; c++) row[c] = h[c];
      int corner = row[tile];
      for (int r = 0; r < tile; r++) {
        int diag = row[0];
        row[0] = v[r + 1];
        for (int c = 1; c <= tile; c++) {
          int cell = max2(diag + subst[a[r] * ALPHABET + b[c - 1]],
                          max2(row[c], row[c - 1]) - gap);
          diag = row[c];
          row[c] = cell;
        }
        right[r] = row[tile];
      }
      row[0] = v[tile];
      for (int c = 0; c <= tile; c++) h[c] = row[c];
      v[0] = corner;
      for (int r = 0; r < tile; r++) v[r + 1] = right[r];
    }
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  int n = (int)kc_int(&r, "n"), batch = (int)kc_int(&r, "batch");
  /* The tile width is a compile-time define of the GPU kernels; hb holds
   * batch * (n / tile) * (tile + 1) values, which gives it back here. */
  int tile;
  for (tile = 1; tile <= 64; tile *= 2)
    if ((long)batch * (n / tile) * (tile + 1) == kc_count(&r, "hb")) break;
  if (tile > 64) {
    fprintf(stderr, "kerncast-c: cannot infer the tile width from hb\n");
    return 2;
  }
  KC_ROI_BEGIN(&r);
  roi_nw_tile_diagonal(kc_buffer(&r, "seq_a"), kc_buffer(&r, "seq_b"), kc_buffer(&r, "subst"),
                       kc_buffer(&r, "hb"), kc_buffer(&r, "vb"), n, batch, (int)kc_int(&r, "gap"),
                       tile);
  KC_ROI_END(&r);
  kc_check(&r, "hb");
  kc_check(&r, "vb");
  return kc_finish(&r);
}

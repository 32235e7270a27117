// Single-source shortest paths: one data-driven Bellman-Ford round on a CSR graph.
// Distances are read from dist_in (the previous round) and lowered in dist with
// atomic_min; a vertex is flagged for the next round exactly when its distance fell.

#ifndef VPT
#define VPT 1  // vertices per work-item, the group size apart
#endif

__kernel void sssp_relax(__global const int* restrict row_ptr,
                         __global const int* restrict cols,
                         __global const int* restrict weights,
                         __global const uchar* restrict active,
                         __global const int* restrict dist_in, __global int* dist,
                         __global uchar* next_active, int n) {
  int first = get_group_id(0) * get_local_size(0) * VPT + get_local_id(0);
#pragma unroll
  for (int j = 0; j < VPT; j++) {
    int v = first + j * (int)get_local_size(0);
    if (v < n && active[v]) {
      int dv = dist_in[v];
      int end = row_ptr[v + 1];
      for (int e = row_ptr[v]; e < end; e++) {
        int u = cols[e];
        int cand = dv + weights[e];
        if (cand < dist[u] && cand < atomic_min(&dist[u], cand)) next_active[u] = 1;
      }
    }
  }
}

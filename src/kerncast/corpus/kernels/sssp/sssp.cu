// Single-source shortest paths: one data-driven Bellman-Ford round on a CSR graph.
// Distances are read from dist_in (the previous round) and lowered in dist with
// atomicMin, so the result does not depend on the order in which threads run: a
// vertex is flagged for the next round exactly when its distance went down.

#ifndef VPT
#define VPT 1  // vertices per thread, blockDim apart
#endif

extern "C" __global__ void sssp_relax(const int* __restrict__ row_ptr,
                                      const int* __restrict__ cols,
                                      const int* __restrict__ weights,
                                      const unsigned char* __restrict__ active,
                                      const int* __restrict__ dist_in, int* dist,
                                      unsigned char* next_active, int n) {
  int first = blockIdx.x * blockDim.x * VPT + threadIdx.x;
#pragma unroll
  for (int j = 0; j < VPT; j++) {
    int v = first + j * blockDim.x;
    if (v < n && active[v]) {
      int dv = dist_in[v];
      int end = row_ptr[v + 1];
      for (int e = row_ptr[v]; e < end; e++) {
        int u = cols[e];
        int cand = dv + weights[e];
        if (cand < dist[u] && cand < atomicMin(&dist[u], cand)) next_active[u] = 1;
      }
    }
  }
}

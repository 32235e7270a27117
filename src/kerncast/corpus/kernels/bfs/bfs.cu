// Breadth-first search, one level per launch, on a CSR graph (int32 indices).
// level[v] is the BFS depth of v, or -1 while v is unvisited.

#ifndef VPT
#define VPT 1  // vertices per thread (bfs_frontier_expand)
#endif
#ifndef CHECK_FIRST
#define CHECK_FIRST 1  // read the level before trying to claim a vertex (bfs_queue_expand)
#endif

// One thread per vertex (VPT vertices per thread, blockDim apart): a vertex of the
// current frontier labels its unvisited out-neighbours with its level + 1 and flags
// them in the next frontier. Threads that find the same neighbour write the same
// values, so the result does not depend on their order.
extern "C" __global__ void bfs_frontier_expand(const int* __restrict__ row_ptr,
                                               const int* __restrict__ cols,
                                               const unsigned char* __restrict__ frontier,
                                               int* level, unsigned char* next_frontier, int n) {
  int first = blockIdx.x * blockDim.x * VPT + threadIdx.x;
#pragma unroll
  for (int j = 0; j < VPT; j++) {
    int v = first + j * blockDim.x;
    if (v < n && frontier[v]) {
      int next = level[v] + 1;
      int end = row_ptr[v + 1];
      for (int e = row_ptr[v]; e < end; e++) {
        int u = cols[e];
        if (level[u] < 0) {
          level[u] = next;
          next_frontier[u] = 1;
        }
      }
    }
  }
}

// One thread per entry of the frontier queue: a neighbour is claimed with an atomic
// compare-and-swap on its level (so it is appended once) and appended to the output
// queue at a slot taken from an atomic counter. The queue's order depends on timing;
// the levels and the count do not.
extern "C" __global__ void bfs_queue_expand(const int* __restrict__ row_ptr,
                                            const int* __restrict__ cols,
                                            const int* __restrict__ queue_in, int* level,
                                            int* queue_out, int* queue_count, int qlen) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= qlen) return;
  int v = queue_in[i];
  int next = level[v] + 1;
  int end = row_ptr[v + 1];
  for (int e = row_ptr[v]; e < end; e++) {
    int u = cols[e];
#if CHECK_FIRST
    if (level[u] >= 0) continue;
#endif
    if (atomicCAS(&level[u], -1, next) == -1) {
      int slot = atomicAdd(queue_count, 1);
      queue_out[slot] = u;
    }
  }
}

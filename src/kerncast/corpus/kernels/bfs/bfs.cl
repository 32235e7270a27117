// Breadth-first search, one level per launch, on a CSR graph (int32 indices).
// level[v] is the BFS depth of v, or -1 while v is unvisited.

#ifndef VPT
#define VPT 1  // vertices per thread (bfs_frontier_expand)
#endif
#ifndef CHECK_FIRST
#define CHECK_FIRST 1  // read the level before trying to claim a vertex (bfs_queue_expand)
#endif

// One work-item per vertex (VPT vertices per work-item, the group size apart).
__kernel void bfs_frontier_expand(__global const int* restrict row_ptr,
                                  __global const int* restrict cols,
                                  __global const uchar* restrict frontier,
                                  __global int* level, __global uchar* next_frontier, int n) {
  int first = get_group_id(0) * get_local_size(0) * VPT + get_local_id(0);
#pragma unroll
  for (int j = 0; j < VPT; j++) {
    int v = first + j * (int)get_local_size(0);
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

// One work-item per entry of the frontier queue; neighbours claimed by compare-and-swap.
__kernel void bfs_queue_expand(__global const int* restrict row_ptr,
                               __global const int* restrict cols,
                               __global const int* restrict queue_in, __global int* level,
                               __global int* queue_out, __global int* queue_count, int qlen) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i >= qlen) return;
  int v = queue_in[i];
  int next = level[v] + 1;
  int end = row_ptr[v + 1];
  for (int e = row_ptr[v]; e < end; e++) {
    int u = cols[e];
#if CHECK_FIRST
    if (level[u] >= 0) continue;
#endif
    if (atomic_cmpxchg(&level[u], -1, next) == -1) {
      int slot = atomic_add(queue_count, 1);
      queue_out[slot] = u;
    }
  }
}

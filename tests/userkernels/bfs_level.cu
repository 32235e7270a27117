// One level of a top-down breadth-first search over a graph in CSR form. Each thread owns
// a vertex; a vertex on the current level claims each unvisited neighbour with atomicCAS
// (level -1 -> cur + 1), and the winner appends it to the next frontier queue.
extern "C" __global__ void bfs_level(const int* __restrict__ row_offsets,
                                     const int* __restrict__ col_indices, int* level,
                                     int n, int cur, int* next_queue, int* next_count) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || level[v] != cur) return;
  int end = row_offsets[v + 1];
  for (int e = row_offsets[v]; e < end; ++e) {
    int w = col_indices[e];
    if (level[w] == -1 && atomicCAS(&level[w], -1, cur + 1) == -1) {
      int slot = atomicAdd(next_count, 1);
      next_queue[slot] = w;
    }
  }
}

// Newer instructions: tensor cores (wmma), asynchronous copies, warp reductions,
// cache hints, fences, sleeps and cooperative-groups tiles.
#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <mma.h>

namespace cg = cooperative_groups;
using namespace nvcuda;

extern "C" __global__ void tensor_tile(const half* a, const half* b, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

extern "C" __global__ void async_copy(const float4* in, float4* out, int n) {
  __shared__ float4 stage[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) __pipeline_memcpy_async(&stage[threadIdx.x], &in[i], sizeof(float4));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  if (i < n) out[i] = stage[threadIdx.x];
}

extern "C" __global__ void warp_reduce(const unsigned* in, unsigned* out, int* flag, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned v = i < n ? __ldg(&in[i]) : 0u;
  unsigned s = __reduce_add_sync(0xffffffffu, v);
  unsigned m = __reduce_max_sync(0xffffffffu, v);
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<8> tile = cg::tiled_partition<8>(block);
  unsigned t = tile.shfl_down(v, 1);
  __threadfence();
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(out, s + m + t);
    while (atomicCAS(flag, 0, 1) != 0) __nanosleep(100);
    __stcs(out + 1, v);
    atomicExch(flag, 0);
  }
  block.sync();
  out[2 + (i & 7)] = __ldcs(in + (i & 7)) + __ldlu(in + 1);
}

extern "C" __global__ void half2_atomics(__half2* acc, float2* f2, const __half2* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(acc, in[i]);
  atomicAdd(f2, make_float2(1.0f, 2.0f));
}

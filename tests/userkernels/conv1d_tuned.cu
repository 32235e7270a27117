// A 1-D convolution with a (2*RADIUS+1)-tap filter, written for Kernel Tuner: the block
// size and the number of outputs per thread come in as macros (block_size_x, tile_size_x),
// and "#pragma unroll loop_unroll_factor_t" is the tunable unroll of the tile loop
// (Kernel Tuner deletes that line when the factor is 0). Each block stages its
// block_size_x * tile_size_x inputs plus a halo of RADIUS on each side in shared memory.
#ifndef block_size_x
#define block_size_x 128
#endif
#ifndef tile_size_x
#define tile_size_x 1
#endif
#define RADIUS 3
#define SPAN (block_size_x * tile_size_x)

extern "C" __global__ void conv1d_tuned(float* __restrict__ out, const float* __restrict__ in,
                                        const float* __restrict__ taps, int n) {
  __shared__ float window[SPAN + 2 * RADIUS];
  int base = blockIdx.x * SPAN;
  for (int i = threadIdx.x; i < SPAN + 2 * RADIUS; i += block_size_x) {
    int g = base + i - RADIUS;
    window[i] = (g >= 0 && g < n) ? in[g] : 0.0f;
  }
  __syncthreads();
#pragma unroll loop_unroll_factor_t
  for (int t = 0; t < tile_size_x; ++t) {
    int local = threadIdx.x + t * block_size_x;
    if (base + local < n) {
      float acc = 0.0f;
#pragma unroll
      for (int k = 0; k <= 2 * RADIUS; ++k) {
        acc += taps[k] * window[local + k];
      }
      out[base + local] = acc;
    }
  }
}

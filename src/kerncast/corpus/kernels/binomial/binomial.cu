// European call options priced by backward induction on a Cox-Ross-Rubinstein
// binomial tree of `steps` (at most STEPS) steps, one block per option. The node
// values live in shared memory; at each step node i becomes pu * V[i+1] + pd * V[i].
// Each thread owns NPT nodes, strided (node k * BLOCK + tid) or blocked (tid * NPT + k);
// a step writes either a second buffer (DBUF = 1, one barrier per step) or the same
// buffer after staging the new values in registers (DBUF = 0, two barriers per step).

#ifndef STEPS
#define STEPS 512  // the most time steps a tree may have (shared-memory capacity)
#endif
#ifndef BLOCK
#define BLOCK 256  // threads per block
#endif
#ifndef DBUF
#define DBUF 1
#endif
#ifndef BLOCKED
#define BLOCKED 0  // 1: contiguous nodes per thread, 0: strided
#endif
#define NODES (STEPS + 1)
#define NPT ((NODES + BLOCK - 1) / BLOCK)  // nodes per thread
#if BLOCKED
#define NODE(tid, k) ((tid) * NPT + (k))
#else
#define NODE(tid, k) ((k) * BLOCK + (tid))
#endif

extern "C" __global__ void binomial_option(const float* __restrict__ spot,
                                           const float* __restrict__ strike,
                                           const float* __restrict__ years,
                                           float* __restrict__ call, int steps, float r,
                                           float v) {
  __shared__ float val[DBUF + 1][NODES];
  int tid = threadIdx.x, opt = blockIdx.x;
  float s = spot[opt], x = strike[opt], t = years[opt];
  float dt = t / steps;
  float vsdt = v * sqrtf(dt);
  float disc = expf(-r * dt);
  // p = (exp(r dt) - d) / (u - d) with u = exp(vsdt), d = 1 / u, written with expm1
  // against cancellation (u - d is ~2 vsdt, a few percent or less).
  float em_d = expm1f(-vsdt);
  float p = (expm1f(r * dt) - em_d) / (expm1f(vsdt) - em_d);
  float pu = p * disc, pd = disc - pu;
#pragma unroll
  for (int k = 0; k < NPT; k++) {
    int i = NODE(tid, k);
    if (i <= steps) val[0][i] = fmaxf(s * expf(vsdt * (float)(2 * i - steps)) - x, 0.0f);
  }
  __syncthreads();
  for (int n = steps; n > 0; n--) {  // n nodes remain after this step
#if DBUF
    int cur = (steps - n) & 1;
#pragma unroll
    for (int k = 0; k < NPT; k++) {
      int i = NODE(tid, k);
      if (i < n) val[cur ^ 1][i] = pu * val[cur][i + 1] + pd * val[cur][i];
    }
    __syncthreads();
#else
    float next[NPT];
#pragma unroll
    for (int k = 0; k < NPT; k++) {
      int i = NODE(tid, k);
      if (i < n) next[k] = pu * val[0][i + 1] + pd * val[0][i];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < NPT; k++) {
      int i = NODE(tid, k);
      if (i < n) val[0][i] = next[k];
    }
    __syncthreads();
#endif
  }
  if (tid == 0) call[opt] = val[DBUF ? (steps & 1) : 0][0];
}

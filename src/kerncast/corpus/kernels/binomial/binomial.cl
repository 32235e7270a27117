// European call options priced by backward induction on a Cox-Ross-Rubinstein
// binomial tree of `steps` (at most STEPS) steps, one work-group per option. The node
// values live in local memory; at each step node i becomes pu * V[i+1] + pd * V[i].
// Each work-item owns NPT nodes, strided (node k * BLOCK + tid) or blocked (tid * NPT + k);
// a step writes either a second buffer (DBUF = 1, one barrier per step) or the same
// buffer after staging the new values in registers (DBUF = 0, two barriers per step).

#ifndef STEPS
#define STEPS 512  // the most time steps a tree may have (shared-memory capacity)
#endif
#ifndef BLOCK
#define BLOCK 256  // work-items per group
#endif
#ifndef DBUF
#define DBUF 1
#endif
#ifndef BLOCKED
#define BLOCKED 0  // 1: contiguous nodes per work-item, 0: strided
#endif
#define NODES (STEPS + 1)
#define NPT ((NODES + BLOCK - 1) / BLOCK)  // nodes per work-item
#if BLOCKED
#define NODE(tid, k) ((tid) * NPT + (k))
#else
#define NODE(tid, k) ((k) * BLOCK + (tid))
#endif

__kernel void binomial_option(__global const float* restrict spot,
                              __global const float* restrict strike,
                              __global const float* restrict years,
                              __global float* restrict call, int steps, float r,
                              float v) {
  __local float val[DBUF + 1][NODES];
  int tid = get_local_id(0), opt = get_group_id(0);
  float s = spot[opt], x = strike[opt], t = years[opt];
  float dt = t / steps;
  float vsdt = v * sqrt(dt);
  float disc = exp(-r * dt);
  // p = (exp(r dt) - d) / (u - d) with u = exp(vsdt), d = 1 / u, written with expm1
  // against cancellation (u - d is ~2 vsdt, a few percent or less).
  float em_d = expm1(-vsdt);
  float p = (expm1(r * dt) - em_d) / (expm1(vsdt) - em_d);
  float pu = p * disc, pd = disc - pu;
#pragma unroll
  for (int k = 0; k < NPT; k++) {
    int i = NODE(tid, k);
    if (i <= steps) val[0][i] = fmax(s * exp(vsdt * (float)(2 * i - steps)) - x, 0.0f);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int n = steps; n > 0; n--) {  // n nodes remain after this step
#if DBUF
    int cur = (steps - n) & 1;
#pragma unroll
    for (int k = 0; k < NPT; k++) {
      int i = NODE(tid, k);
      if (i < n) val[cur ^ 1][i] = pu * val[cur][i + 1] + pd * val[cur][i];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    float next[NPT];
#pragma unroll
    for (int k = 0; k < NPT; k++) {
      int i = NODE(tid, k);
      if (i < n) next[k] = pu * val[0][i + 1] + pd * val[0][i];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int k = 0; k < NPT; k++) {
      int i = NODE(tid, k);
      if (i < n) val[0][i] = next[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }
  if (tid == 0) call[opt] = val[DBUF ? (steps & 1) : 0][0];
}

// Branch-divergence micro-benchmark: every element runs one of eight arithmetic loops
// (iters dependent FMAs each, with different constants), chosen by a pattern that sets how
// many distinct branches the 32 lanes of a warp take: 1 (uniform), 2 (half-warp split or
// lane parity), 4 or 8 (switch on the lane id), or as the data say (an element class).

// Branch taken by element i under each pattern (the same for every block size).
int branch_of(int i, int pattern, __global const uchar* restrict cls) {
  switch (pattern) {
    case 0: return (i >> 10) & 7;  // uniform: 1024 consecutive threads agree
    case 1: return (i >> 4) & 1;   // half-warp split
    case 2: return i & 1;          // lane parity
    case 3: return i & 3;          // 4-way on the lane id
    case 4: return i & 7;          // 8-way on the lane id
    default: return cls[i] & 7;    // data-dependent: the element's class
  }
}

// Branch b iterates a <- a * m_b + c_b with m_b = 0.99 - 0.01 b and fixed point b + 1.
#define CHAIN(M, C)                                   \
  _Pragma("unroll 4") for (int k = 0; k < iters; k++) \
    a = a * M + C;                                    \
  break;

__kernel void branch_divergence(__global const float* restrict x,
                                __global const uchar* restrict cls, __global float* restrict y,
                                int n, int iters, int pattern) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i >= n) return;
  float a = x[i];
  switch (branch_of(i, pattern, cls)) {
    case 0: CHAIN(0.99f, 0.01f)
    case 1: CHAIN(0.98f, 0.04f)
    case 2: CHAIN(0.97f, 0.09f)
    case 3: CHAIN(0.96f, 0.16f)
    case 4: CHAIN(0.95f, 0.25f)
    case 5: CHAIN(0.94f, 0.36f)
    case 6: CHAIN(0.93f, 0.49f)
    default: CHAIN(0.92f, 0.64f)
  }
  y[i] = a;
}

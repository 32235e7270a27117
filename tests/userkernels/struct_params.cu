// A kernel taking a struct by value. Params has C layout
//   float alpha @0, int n @4, float beta @8, (4 bytes padding), double gamma @16;
// 24 bytes, 8-byte aligned, and it comes after a pointer parameter.
struct Params {
  float alpha;
  int n;
  float beta;
  double gamma;
};

extern "C" __global__ void affine_struct(const float* __restrict__ x, Params p,
                                         double* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) {
    y[i] = p.gamma * (double)(p.alpha * x[i] + p.beta);
  }
}

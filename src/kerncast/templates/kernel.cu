// A kernel of your own: kerncast predicts it from this source and launch.toml.
// Replace it with yours; keep the entry's name in launch.toml's `kernel`.
// (extern "C" keeps the name unmangled; C++ kernels work too, by their plain name.)
extern "C" __global__ void scale_add(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

/* kerncast's OpenCL C shim for clang's NVPTX back end with libclc.
 *
 * clang 14 cannot lower libclc's native_* and half_* math on NVPTX (the backend
 * stops at an undefined external such as exp2f). kerncast pre-includes this file
 * after clc/clc.h, so those functions become the full-precision built-ins, which
 * libclc implements. The PTX then has the full-precision instruction sequences:
 * a kernel using native_sin is analysed as if it called sin (NVIDIA's own OpenCL
 * compiler maps native_sin to the fast sin.approx instead).
 */
#ifndef KC_OPENCL_NATIVE_H
#define KC_OPENCL_NATIVE_H

#define native_cos cos
#define native_exp exp
#define native_exp2 exp2
#define native_exp10 exp10
#define native_log log
#define native_log2 log2
#define native_log10 log10
#define native_powr powr
#define native_rsqrt rsqrt
#define native_sin sin
#define native_sqrt sqrt
#define native_tan tan
#define native_recip(x) (1.0f / (x))
#define native_divide(x, y) ((x) / (y))

#define half_cos cos
#define half_exp exp
#define half_exp2 exp2
#define half_exp10 exp10
#define half_log log
#define half_log2 log2
#define half_log10 log10
#define half_powr powr
#define half_rsqrt rsqrt
#define half_sin sin
#define half_sqrt sqrt
#define half_tan tan
#define half_recip(x) (1.0f / (x))
#define half_divide(x, y) ((x) / (y))

#endif

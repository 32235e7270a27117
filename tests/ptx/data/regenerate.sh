#!/bin/sh
# Regenerate the committed PTX test inputs from the sources in src/ (needs nvcc from
# CUDA 13.0 and clang-14 with libclc). Run from any directory.
set -eu
cd "$(dirname "$0")"
for arch in 90 80; do
  nvcc -ptx -arch=sm_$arch -o stress_sm$arch.ptx src/stress.cu
  nvcc -ptx -arch=sm_$arch -o halfs_sm$arch.ptx src/halfs.cu
done
nvcc -ptx -arch=sm_90 -o advanced_sm90.ptx src/advanced.cu
nvcc -ptx -arch=sm_90 -lineinfo -o stress_lineinfo_sm90.ptx src/stress.cu
nvcc -ptx -arch=sm_90 -G -o halfs_debug_sm90.ptx src/halfs.cu
clang-14 -cl-std=CL1.2 -target nvptx64-unknown-nvidiacl -march=sm_80 -O2 \
  -Xclang -mlink-bitcode-file -Xclang /usr/lib/clc/nvptx64--nvidiacl.bc \
  -include clc/clc.h -S -o stress_cl_sm80.ptx src/stress.cl
clang-14 -cl-std=CL1.2 -target nvptx64-unknown-nvidiacl -march=sm_86 -O1 \
  -Xclang -mlink-bitcode-file -Xclang /usr/lib/clc/nvptx64--nvidiacl.bc \
  -include clc/clc.h -S -o stress_cl_O1_sm86.ptx src/stress.cl

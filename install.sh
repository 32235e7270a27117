#!/usr/bin/env bash
# Installs kerncast on a Debian machine (Python >= 3.11; no GPU or CUDA toolkit needed):
#   - Debian packages: clang-14 and libclc-14 (OpenCL C -> PTX), gcc (the C versions of
#     the corpus kernels), LLVM 14's tools and headers with g++ (the CPU profiler behind
#     kerncast speedup), and with --test Chromium and its driver (report tests);
#   - a virtual environment .venv holding kerncast and its Python dependencies, among
#     them NVIDIA's CUDA 13.0 compiler wheels (nvcc, NVRTC, ptxas), nvdisasm and, with --test or
#     --opencl, PyOpenCL with PoCL (a real OpenCL device on the CPU).
# Usage: ./install.sh [--test] [--opencl]
set -euo pipefail
cd "$(dirname "$0")"

extras="opencl"
apt_extra=""
for arg in "$@"; do
  case "$arg" in
    --test) extras="test"; apt_extra="chromium chromium-driver" ;;
    --opencl) extras="opencl" ;;
    *) echo "usage: ./install.sh [--test] [--opencl]" >&2; exit 2 ;;
  esac
done

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "[kerncast] installing Debian packages (clang-14, libclc-14, llvm-14-dev, gcc, g++ ${apt_extra})"
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  clang-14 libclc-14 llvm-14-dev gcc g++ libc6-dev python3-venv ca-certificates $apt_extra >/dev/null

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "[kerncast] creating .venv with $($python --version)"
  "$python" -m venv .venv
fi
echo "[kerncast] installing kerncast[$extras] into .venv"
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[$extras]"
echo "[kerncast] ready: .venv/bin/kerncast --help"

#!/bin/sh
# compile_gpu_check.sh TESTDIR SRCROOT OUT [NAME]: builds NAME.cu
# (default attention_check) of TESTDIR with nvcc ($NVCC, else nvcc on PATH,
# else /usr/local/cuda/bin/nvcc) for sm_80..sm_90.
# Exit 77 (ctest: skipped) when there is no nvcc. GENCODE (e.g. "-gencode
# arch=compute_90,code=sm_90") replaces the arch list: bench/gpu/check.sh
# builds only for the GPU it runs on.
set -e
testdir=$1 root=$2 out=$3 name=${4:-attention_check}
nvcc=${NVCC:-}
[ -n "$nvcc" ] || nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || { [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc; } || true
if [ -z "$nvcc" ] || ! command -v "$nvcc" >/dev/null 2>&1; then
  echo "SKIPPED: nvcc not found (NVCC='${NVCC:-}'; set NVCC or install the CUDA toolkit)"
  exit 77
fi
gencode=${GENCODE:-"-gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86
  -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90"}
# shellcheck disable=SC2086 # gencode is a list of flags
exec "$nvcc" -O3 -std=c++17 --threads 2 -Werror all-warnings $gencode \
  -I"$root/compiler/codegen/cuda/kernels" -I"$root/runtime/include" \
  -o "$out" "$testdir/$name.cu"

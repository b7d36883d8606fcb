#!/usr/bin/env bash
# bench/gpu/check.sh - the CUDA backend on a GPU machine (CUDA driver, CMake, a
# C++ compiler; no MLIR, no flatc, no internet). Needs bench/gpu/artifacts/
# from prepare.sh. Builds only libencrt + gpu_check, then
#   (a) tests/cuda/attention_check.cu and kernels_check.cu with nvcc (skipped when absent),
#   (b) every "both"/"compare" line of artifacts/checks.txt: CUDA vs CPU,
#   (c) every "time" line: median encrt_session_run latency, and every
#       "profile" line: device time per kernel (CUDA events),
#   (d) compute-sanitizer memcheck over the tiny models (where it runs),
#   (e) the PyTorch peer: transformers' BertModel fp16 (SDPA) at the same
#       shapes (bench/gpu/torch_peer.py; skipped without torch + transformers),
# and prints the timing table last. Exit status: non-zero if a check failed.
# Env: ENCC_GPU_BUILD (build dir, default build-gpu/), NVCC, ENCC_GPU_PEER=0
# (skip (e)), ENCC_GPU_SANITIZE=0 (skip (d)).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
art=$root/bench/gpu/artifacts
build=${ENCC_GPU_BUILD:-$root/build-gpu}
jobs=$(nproc 2>/dev/null || echo 4)
failed=0
log() { printf '\n== %s\n' "$*"; }

[ -f "$art/checks.txt" ] || { echo "check.sh: no $art/checks.txt (run bench/gpu/prepare.sh and carry bench/gpu/artifacts)"; exit 2; }
command -v nvidia-smi >/dev/null &&
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.max.sm --format=csv,noheader
command -v nvcc >/dev/null && nvcc --version | tail -2
echo "host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"

log "build libencrt + gpu_check"
cfg=(-DCMAKE_BUILD_TYPE=Release)
if ! command -v flatc >/dev/null; then
  cfg+=(-DENCRT_PREGENERATED_SCHEMA_DIR="$art/vendor/gen" -DENCRT_FLATBUFFERS_INCLUDE="$art/vendor/include")
fi
if [ ! -f /usr/include/sodium.h ] && [ ! -f /usr/local/include/sodium.h ]; then
  cfg+=(-DENCRT_SODIUM_INCLUDE="$art/vendor/sodium/include"
        -DENCRT_SODIUM_LIBRARY="$art/vendor/sodium/lib/libsodium.a")
fi
mkdir -p "$build"
cmake -S "$root/bench/gpu" -B "$build" "${cfg[@]}" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 2; }
cmake --build "$build" -j "$jobs" --target gpu_check >"$build/build.log" 2>&1 ||
  { tail -40 "$build/build.log"; exit 2; }
check=$build/gpu_check

# cuBLASLt: from the system, else the CUDA toolkit's, else the pip wheels
# PyTorch brought (nvidia/cublas/lib, or nvidia/cu13/lib for CUDA 13 wheels).
if ! ldconfig -p 2>/dev/null | grep -q 'libcublasLt\.so'; then
  dirs=(/usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib)
  for py in python3 python; do
    command -v $py >/dev/null || continue
    site=$($py -c 'import site, sys; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null)
    for sp in $site; do dirs+=("$sp"/nvidia/*/lib "$sp"/torch/lib); done
    break
  done
  for dir in "${dirs[@]}"; do
    if ls "$dir"/libcublasLt.so* >/dev/null 2>&1; then
      export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      echo "cuBLASLt from $dir"
      break
    fi
  done
fi

log "(a) generated kernels vs float64 references (tests/cuda/*_check.cu)"
# Build them for this GPU only (saves minutes of nvcc): compute capability from nvidia-smi.
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
case "$cap" in
  [0-9][0-9]|[0-9][0-9][0-9]) export GENCODE="-gencode arch=compute_$cap,code=sm_$cap"; echo "building for sm_$cap" ;;
esac
for name in attention_check kernels_check; do
  if [ ! -f "$root/tests/cuda/$name.cu" ]; then echo "SKIPPED: tests/cuda/$name.cu not present"; continue; fi
  sh "$root/tests/cuda/compile_gpu_check.sh" "$root/tests/cuda" "$root" "$build/$name" "$name"
  rc=$?
  if [ $rc -eq 77 ]; then echo "SKIPPED: no nvcc"
  elif [ $rc -ne 0 ]; then echo "FAIL: $name did not compile"; failed=1
  else timeout 120 "$build/$name" || { echo "FAIL: $name"; failed=1; }
  fi
done

log "(b) CUDA vs CPU outputs"
cd "$art"
while read -r cmd a b c d; do
  case "$cmd" in
  both) timeout 300 "$check" both "$a" "$b" || failed=1 ;;
  compare) timeout 300 "$check" compare "$a" "$b" "$c" || failed=1 ;;
  esac
done < <(grep -v '^#' checks.txt)

log "(c) timing and profiles"
times=$(mktemp)
while read -r cmd a b c d; do
  case "$cmd" in
  time) timeout 300 "$check" time "$a" "$b" "$c" "$d" | tee -a "$times" || failed=1 ;;
  time-untuned) # the same without the runtime's GEMM tuning (cuBLASLt's first choice)
    ENCRT_CUDA_GEMM_TUNE=0 timeout 300 "$check" time "$a" "$b" "$c" "$d" | tee -a "$times" || failed=1 ;;
  profile) timeout 300 "$check" profile "$a" "$b" "$c" "$d" || failed=1 ;;
  esac
done < <(grep -v '^#' checks.txt)

if [ "${ENCC_GPU_SANITIZE:-1}" != 0 ] && command -v compute-sanitizer >/dev/null; then
  log "(d) compute-sanitizer memcheck: the tiny models on CUDA"
  for t in tiny-fp16.encm tiny-int8.encm; do
    timeout 180 compute-sanitizer --tool memcheck --error-exitcode 3 "$check" both "$t" 0.99 \
      > "$build/sanitize.log" 2>&1
    rc=$?
    tail -3 "$build/sanitize.log"
    case $rc in
    0) echo "memcheck $t: clean" ;;
    3) echo "FAIL: memcheck $t found errors"; grep -m20 -B2 -A8 'Invalid\|ERROR' "$build/sanitize.log"; failed=1 ;;
    *) echo "memcheck $t: not run to the end (exit $rc); not counted" ;;
    esac
  done
fi

if [ "${ENCC_GPU_PEER:-1}" != 0 ]; then
  log "(e) PyTorch peer: transformers BertModel fp16 (SDPA), same shapes"
  timeout 240 python3 "$root/bench/gpu/torch_peer.py" "$root/bench/models/bert-base-uncased-shaped" \
    1,8,32,128 128 | tee -a "$times" || echo "torch peer: did not finish (not counted)"
fi

log "encrt_session_run on CUDA: median of many synchronous runs after warm-up (ms)"
awk 'BEGIN { printf "%-30s %6s %5s %10s %10s %10s %10s\n", "artifact", "batch", "seq", "median", "p10", "p90", "seq/s" }
     $1 == "TIME" { printf "%-30s %6s %5s %10s %10s %10s %10s\n", $2, $4, $6, $8, $10, $12, $14 }' "$times"
rm -f "$times"
[ $failed -eq 0 ] && echo "ALL CHECKS PASSED" || echo "SOME CHECKS FAILED"
exit $failed

#!/usr/bin/env bash
# bench/gpu/check.sh - the CUDA backend on a GPU machine (CUDA driver, CMake, a
# C++ compiler; no MLIR, no flatc, no internet). Needs bench/gpu/artifacts/
# from prepare.sh. Builds only libencrt + gpu_check, then
#   (a) tests/cuda/attention_check.cu and kernels_check.cu with nvcc (skipped when absent),
#   (b) every "both"/"compare" line of artifacts/checks.txt: CUDA vs CPU,
#   (c) every "time" line: median encrt_session_run latency,
# and prints the timing table last. Exit status: non-zero if a check failed.
# Env: ENCC_GPU_BUILD (build dir, default build-gpu/), NVCC.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
art=$root/bench/gpu/artifacts
build=${ENCC_GPU_BUILD:-$root/build-gpu}
jobs=$(nproc 2>/dev/null || echo 4)
failed=0
log() { printf '\n== %s\n' "$*"; }

[ -f "$art/checks.txt" ] || { echo "check.sh: no $art/checks.txt (run bench/gpu/prepare.sh and carry bench/gpu/artifacts)"; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

log "build libencrt + gpu_check"
cfg=(-DCMAKE_BUILD_TYPE=Release)
if ! command -v flatc >/dev/null; then
  cfg+=(-DENCRT_PREGENERATED_SCHEMA_DIR="$art/vendor/gen" -DENCRT_FLATBUFFERS_INCLUDE="$art/vendor/include")
fi
mkdir -p "$build"
cmake -S "$root/bench/gpu" -B "$build" "${cfg[@]}" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 2; }
cmake --build "$build" -j "$jobs" --target gpu_check >"$build/build.log" 2>&1 ||
  { tail -40 "$build/build.log"; exit 2; }
check=$build/gpu_check

# cuBLASLt: from the system, else from the pip wheels PyTorch brought.
if ! ldconfig -p 2>/dev/null | grep -q 'libcublasLt\.so'; then
  for py in python3 python; do
    command -v $py >/dev/null || continue
    extra=$($py - 2>/dev/null <<'PY'
import os, glob
dirs = []
try:
    import nvidia.cublas
    dirs += [os.path.join(p, "lib") for p in nvidia.cublas.__path__]
except Exception:
    pass
try:
    import torch
    dirs.append(os.path.join(os.path.dirname(torch.__file__), "lib"))
except Exception:
    pass
print(":".join(d for d in dirs if glob.glob(os.path.join(d, "libcublasLt.so*"))))
PY
)
    [ -n "$extra" ] && { export LD_LIBRARY_PATH="$extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; echo "cuBLASLt from $extra"; break; }
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

log "(c) timing"
times=$(mktemp)
while read -r cmd a b c d; do
  [ "$cmd" = time ] || continue
  timeout 300 "$check" time "$a" "$b" "$c" "$d" | tee -a "$times" || failed=1
done < <(grep -v '^#' checks.txt)

log "encrt_session_run on CUDA: median of many synchronous runs after warm-up (ms)"
awk 'BEGIN { printf "%-22s %6s %5s %10s %10s %10s %10s\n", "artifact", "batch", "seq", "median", "p10", "p90", "seq/s" }
     $1 == "TIME" { printf "%-22s %6s %5s %10s %10s %10s %10s\n", $2, $4, $6, $8, $10, $12, $14 }' "$times"
rm -f "$times"
[ $failed -eq 0 ] && echo "ALL CHECKS PASSED" || echo "SOME CHECKS FAILED"
exit $failed

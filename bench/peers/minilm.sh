#!/usr/bin/env bash
# One run, same machine: encc (bench/e2e_bench.cpp) then ONNX Runtime on all-MiniLM-L6-v2,
# batch 1 and 8 x 128 tokens, 2 threads. The peers need a Python with torch, transformers,
# onnxruntime (PYTHON, default python3); the full comparison is issue 5's compare.sh.
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib.sh"
PYTHON="${PYTHON:-python3}"
model_dir="$(fetch_minilm)"
"$ENCC_ROOT/scripts/bench" --benchmark_filter=Forward --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true 2>&1 | grep -E "median|Run on|CPU"
"$PYTHON" "$ENCC_ROOT/bench/peers/onnxruntime_minilm.py" "$model_dir" --threads 2 2>&1 | grep onnxruntime

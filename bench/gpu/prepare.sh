#!/usr/bin/env bash
# bench/gpu/prepare.sh [BUILD_DIR] - on the CPU development machine (full build,
# with encc): writes bench/gpu/artifacts/, everything check.sh needs on a GPU
# machine that has no MLIR, no flatc and no internet:
#   *.encm        tiny models (fp16 and int8, CUDA + CPU plans), MiniLM fp16
#                 (CUDA only, to fit the carry limit), BERT-base-shaped random
#                 weights (fp16 and int8, CUDA only; no weight bytes in the file)
#   minilm.ref    CPU (fp32) outputs of gpu_check's fixed inputs for MiniLM
#   checks.txt    what check.sh runs: "both|compare|time ..." lines
#   vendor/       artifact_generated.h and the FlatBuffers headers
# BUILD_DIR defaults to build/ (bin/encc, bin/make-tiny-model). MiniLM comes
# from $ENCC_MINILM_DIR (scripts/test sets it). Carry bench/gpu/artifacts.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=$root/bench/gpu/artifacts
encc=$build/bin/encc
tiny=$build/bin/make-tiny-model
minilm=${ENCC_MINILM_DIR:-}
bertcfg=$root/bench/models/bert-base-uncased-shaped
log() { printf '== %s\n' "$*" >&2; }
die() { printf 'prepare.sh: %s\n' "$*" >&2; exit 1; }

[ -x "$encc" ] || die "no $encc (build the project first)"
[ -x "$tiny" ] || die "no $tiny"
[ -n "$minilm" ] && [ -f "$minilm/config.json" ] ||
  die "ENCC_MINILM_DIR is unset or has no config.json (all-MiniLM-L6-v2 is needed)"
[ -f "$bertcfg/config.json" ] || die "no $bertcfg/config.json"
command -v flatc >/dev/null || die "flatc not found"
fbinc=$(dirname "$(dirname "$(find /usr/include /usr/local/include -name flatbuffers.h \
  -path '*flatbuffers/flatbuffers.h' 2>/dev/null | head -1)")")
[ -f "$fbinc/flatbuffers/flatbuffers.h" ] || die "FlatBuffers headers not found"

rm -rf "$out"
mkdir -p "$out/vendor/gen/encrt" "$out/vendor/include"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

log "headers for a machine without flatc"
flatc --cpp --scoped-enums -o "$out/vendor/gen/encrt" "$root/runtime/schema/artifact.fbs"
cp -r "$fbinc/flatbuffers" "$out/vendor/include/"

log "gpu_check (host build, to record CPU references)"
cmake -S "$root/bench/gpu" -B "$tmp/host" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/host" -j2 --target gpu_check >/dev/null
check=$tmp/host/gpu_check

compile() { # NAME SRC FLAGS...
  local name=$1 src=$2
  shift 2
  log "encc compile $name: $*"
  "$encc" compile "$src" -o "$out/$name.encm" -q "$@"
}

log "tiny model"
"$tiny" "$tmp/tiny" --hidden 128 --heads 2 --intermediate 256 --layers 2 --vocab 200 \
  --max-positions 128 >/dev/null
compile tiny-fp16 "$tmp/tiny" --target=cuda,cpu --cuda-dtype=f16
compile tiny-int8 "$tmp/tiny" --target=cuda,cpu --cuda-dtype=f16 --quantize=int8

log "MiniLM: CUDA-only fp16 artifact + CPU fp32 reference"
compile minilm-fp16 "$minilm" --target=cuda --cuda-dtype=f16
"$encc" compile "$minilm" -o "$tmp/minilm-cpu.encm" -q --target=cpu
"$check" record "$tmp/minilm-cpu.encm" "$out/minilm.ref"

log "BERT-base-shaped, random weights (timing only)"
compile bert-base-fp16 "$bertcfg" --target=cuda --cuda-dtype=f16 --weights=random:1
compile bert-base-int8 "$bertcfg" --target=cuda --cuda-dtype=f16 --quantize=int8 --weights=random:1

cat > "$out/checks.txt" <<'CHECKS'
# check.sh: one check per line. both ARTIFACT MIN_COS | compare ARTIFACT REF MIN_COS |
# time ARTIFACT BATCHES SEQ RUNS (paths relative to this directory)
both tiny-fp16.encm 0.9995
both tiny-int8.encm 0.99
compare minilm-fp16.encm minilm.ref 0.9995
time minilm-fp16.encm 1,8,32 128 200
time bert-base-fp16.encm 1,8,32 128 200
time bert-base-int8.encm 1,8,32 128 200
CHECKS

size=$(du -sm "$out" | cut -f1)
log "bench/gpu/artifacts: ${size} MiB (the carry limit is 64 MiB)"
[ "$size" -lt 64 ] || die "bench/gpu/artifacts is ${size} MiB, over the 64 MiB carry limit"

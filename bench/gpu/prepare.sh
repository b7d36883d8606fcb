#!/usr/bin/env bash
# bench/gpu/prepare.sh [BUILD_DIR] - on the CPU development machine (full build,
# with encc): writes bench/gpu/artifacts/, everything check.sh needs on a GPU
# machine that has no MLIR, no flatc and no internet. ENCC_GPU_SUITE picks
# what goes in (the device tool carries at most 64 MiB, and MiniLM's fp16
# artifact and the BERT-base-shaped reference model do not fit together):
#   every suite  tiny models (fp16, bf16, int8; CUDA + CPU plans, compared with
#                each other); BERT-base-shaped with --weights=random (fp16,
#                int8, and fp16 on CUDA cores; CUDA only, no weight bytes in
#                the file): timings and per-kernel profiles
#   minilm       + all-MiniLM-L6-v2 fp16 (CUDA only) and minilm.ref, its CPU
#                fp32 outputs of gpu_check's fixed inputs; MiniLM timings
#   bert         + bert1l-{fp16,int8}: a 1-layer model of BERT-base's shape
#                (hidden 768, 12 heads of 64, FFN 3072) with stored random
#                weights, CUDA only, and bert1l.ref, the CPU fp32 outputs of
#                the same weights (random-weight artifacts cannot be compared:
#                each plan's weights are generated at load, so they differ)
#   all          both (default; over the device tool's carry limit)
# Also: checks.txt, what check.sh runs ("both|compare|time|profile ..."
# lines), and vendor/: artifact_generated.h, the FlatBuffers headers and
# libsodium (headers + static library) for libencrt.
# BUILD_DIR defaults to build/ (bin/encc, bin/make-tiny-model). MiniLM comes
# from $ENCC_MINILM_DIR (scripts/test sets it). Carry bench/gpu/artifacts.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=$root/bench/gpu/artifacts
encc=$build/bin/encc
tiny=$build/bin/make-tiny-model
minilm=${ENCC_MINILM_DIR:-}
suite=${ENCC_GPU_SUITE:-all}
bertcfg=$root/bench/models/bert-base-uncased-shaped
log() { printf '== %s\n' "$*" >&2; }
die() { printf 'prepare.sh: %s\n' "$*" >&2; exit 1; }

[ -x "$encc" ] || die "no $encc (build the project first)"
[ -x "$tiny" ] || die "no $tiny"
case "$suite" in
all | minilm | bert) ;;
*) die "ENCC_GPU_SUITE expects all, minilm or bert, got '$suite'" ;;
esac
want() { [ "$suite" = all ] || [ "$suite" = "$1" ]; }
if want minilm; then
  [ -n "$minilm" ] && [ -f "$minilm/config.json" ] ||
    die "ENCC_MINILM_DIR is unset or has no config.json (all-MiniLM-L6-v2 is needed)"
fi
[ -f "$bertcfg/config.json" ] || die "no $bertcfg/config.json"
command -v flatc >/dev/null || die "flatc not found"
sodium_h=$(find /usr/include /usr/local/include -maxdepth 1 -name sodium.h 2>/dev/null | head -1)
sodium_a=$(find /usr/lib /usr/local/lib -name libsodium.a 2>/dev/null | head -1)
[ -n "$sodium_h" ] && [ -n "$sodium_a" ] || die "libsodium (static) not found: install libsodium-dev"
fbinc=$(dirname "$(dirname "$(find /usr/include /usr/local/include -name flatbuffers.h \
  -path '*flatbuffers/flatbuffers.h' 2>/dev/null | head -1)")")
[ -f "$fbinc/flatbuffers/flatbuffers.h" ] || die "FlatBuffers headers not found"

rm -rf "$out"
mkdir -p "$out/vendor/gen/encrt" "$out/vendor/include" "$out/vendor/sodium/include" "$out/vendor/sodium/lib"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

log "headers for a machine without flatc"
flatc --cpp --scoped-enums -o "$out/vendor/gen/encrt" "$root/runtime/schema/artifact.fbs"
cp -r "$fbinc/flatbuffers" "$out/vendor/include/"
cp -r "$sodium_h" "$(dirname "$sodium_h")/sodium" "$out/vendor/sodium/include/"
cp "$sodium_a" "$out/vendor/sodium/lib/"

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

# The carry limit: one CPU level (x86-64-v3) where a CPU plan is only the
# reference, and fatbins for sm_90 (H100/H200) alone except MiniLM's (the
# default arch list, so the default fatbin is what loads there); set
# ENCC_GPU_ARCH (e.g. sm_80) for another GPU.
arch=--cuda-arch=${ENCC_GPU_ARCH:-sm_90}
checks=$out/checks.txt
cat > "$checks" <<'CHECKS'
# check.sh: one check per line. both ARTIFACT MIN_COS | compare ARTIFACT REF MIN_COS |
# time ARTIFACT BATCHES SEQ RUNS | time-untuned (the same, ENCRT_CUDA_GEMM_TUNE=0) |
# profile ARTIFACT BATCH SEQ RUNS (paths relative to this directory)
both tiny-fp16.encm 0.9995
both tiny-bf16.encm 0.999
both tiny-int8.encm 0.999
CHECKS

log "tiny model"
"$tiny" "$tmp/tiny" --hidden 128 --heads 2 --intermediate 256 --layers 2 --vocab 200 \
  --max-positions 128 >/dev/null
compile tiny-fp16 "$tmp/tiny" --target=cuda,cpu --cuda-dtype=f16 --cpu=x86-64-v3 "$arch"
compile tiny-bf16 "$tmp/tiny" --target=cuda,cpu --cuda-dtype=bf16 --cpu=x86-64-v3 "$arch"
compile tiny-int8 "$tmp/tiny" --target=cuda,cpu --cuda-dtype=f16 --quantize=int8 --cpu=x86-64-v3 "$arch"

if want minilm; then
  log "MiniLM: CUDA-only fp16 artifact + CPU fp32 reference"
  compile minilm-fp16 "$minilm" --target=cuda --cuda-dtype=f16
  "$encc" compile "$minilm" -o "$tmp/minilm-cpu.encm" -q --target=cpu
  "$check" record "$tmp/minilm-cpu.encm" "$out/minilm.ref"
  cat >> "$checks" <<'CHECKS'
compare minilm-fp16.encm minilm.ref 0.9995
time minilm-fp16.encm 1,8,32,128 128 200
profile minilm-fp16.encm 128 128 20
CHECKS
fi

if want bert; then
  log "BERT-base-shaped, 1 layer, stored random weights: CUDA-only fp16 / int8 + CPU fp32 reference"
  "$tiny" "$tmp/bert1l" --hidden 768 --heads 12 --intermediate 3072 --layers 1 --vocab 1000 \
    --max-positions 512 >/dev/null
  compile bert1l-fp16 "$tmp/bert1l" --target=cuda --cuda-dtype=f16 "$arch"
  compile bert1l-int8 "$tmp/bert1l" --target=cuda --cuda-dtype=f16 --quantize=int8 "$arch"
  "$encc" compile "$tmp/bert1l" -o "$tmp/bert1l-cpu.encm" -q --target=cpu --cpu=x86-64-v3
  "$check" record "$tmp/bert1l-cpu.encm" "$out/bert1l.ref"
  cat >> "$checks" <<'CHECKS'
compare bert1l-fp16.encm bert1l.ref 0.9995
compare bert1l-int8.encm bert1l.ref 0.999
CHECKS
fi

log "BERT-base-shaped, random weights (timing and profiles only)"
compile bert-base-fp16 "$bertcfg" --target=cuda --cuda-dtype=f16 --weights=random:1 "$arch"
compile bert-base-int8 "$bertcfg" --target=cuda --cuda-dtype=f16 --quantize=int8 --weights=random:1 "$arch"
compile bert-base-fp16-cudacores "$bertcfg" --target=cuda --cuda-dtype=f16 --weights=random:1 "$arch" \
  --cuda-attention=cuda-cores
cat >> "$checks" <<'CHECKS'
time bert-base-fp16.encm 1,8,32,128 128 200
time bert-base-int8.encm 1,8,32,128 128 200
time-untuned bert-base-fp16.encm 1,8,32,128 128 200
time bert-base-fp16-cudacores.encm 1,8,32,128 128 200
profile bert-base-fp16.encm 1 128 50
profile bert-base-fp16.encm 128 128 20
profile bert-base-int8.encm 128 128 20
CHECKS

# What travels: the tracked files, untracked ones git does not ignore, and this folder.
tree=$(cd "$root" && { git ls-files -z; git ls-files -z --others --exclude-standard; } |
  xargs -0 du -cb 2>/dev/null | awk '$2 == "total" { t += $1 } END { print t + 0 }')
size=$(du -sb "$out" | cut -f1)
total=$(( (tree + size) / 1048576 ))
log "bench/gpu/artifacts: $((size / 1048576)) MiB; with the working tree ${total} MiB (the device tool carries at most 64 MiB)"
if [ "$total" -ge 62 ]; then
  log "the working tree with bench/gpu/artifacts is ${total} MiB: too much for the device tool's 64 MiB" \
      "carry limit (ENCC_GPU_SUITE=minilm or bert carries less)"
fi

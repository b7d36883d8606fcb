#!/usr/bin/env bash
# encc vs ONNX Runtime (fp32 with its transformer optimiser, int8 quantize_dynamic),
# CTranslate2 (fp32, int8) and PyTorch (fp32 eager) on all-MiniLM-L6-v2: same machine,
# same token ids, 1 and 2 threads, one run. Prints a table of latencies and ratios vs
# encc, checks every peer's output against encc's, writes bench/peers/results.json and
# bench/peers/compare.svg.
#
#   bench/peers/compare.sh [--model minilm|bert-base] [compare.py options, e.g. --threads 2 --runs 30 --skip torch]
#
# --model bert-base: the same table for a BERT-base-shaped model (bench/models/
# bert-base-uncased-shaped/config.json) with torch's random init (torch.manual_seed(0)),
# created once under $ENCC_CACHE/models/bert-base-random (model.safetensors, config.json and
# MiniLM's vocab.txt: the same 30522-token uncased vocabulary), so encc compiles it as a normal
# model folder with real weights and the cosine checks apply. BERT-base costs ~8x MiniLM per
# token: it runs --runs 8 unless given (PyTorch: b1_s128 within its time budget), and writes
# results-bert-base.json / compare-bert-base.svg.
#
# The peers are never product dependencies: they go into a venv of their own
# ($ENCC_CACHE/peers-venv, over Debian's python3-torch: PyPI's default torch wheel pulls
# gigabytes of CUDA). Environment: ENCC_BUILD (build dir, default build/), ENCC_MINILM_DIR
# (model folder, else fetched), ENCC_PEERS_NO_BUILD=1 (use the existing build as is).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../../scripts/lib.sh"

model=minilm
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --model) [ $# -ge 2 ] || die "--model needs a value (minilm or bert-base)"; model="$2"; shift 2 ;;
    --model=*) model="${1#--model=}"; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
case "$model" in minilm|bert-base) ;; *) die "--model expects minilm or bert-base, got '$model'" ;; esac

# Debian packages for the peers' Python: its torch and venv support.
peer_debs=(python3-venv python3-torch)
missing=()
for p in "${peer_debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages for the peers: ${missing[*]}"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    || die "apt-get install failed for: ${missing[*]}"
fi

# The peers' venv. Debian's torch 1.13 is built against numpy 1.x; transformers 4.40 is
# the last line that runs on torch 1.13 (and what tests/ records references with).
venv="$ENCC_CACHE/peers-venv"
reqs=("numpy<2" "onnxruntime" "onnx" "transformers==4.40.2" "ctranslate2" "matplotlib")
stamp="$venv/.encc-reqs"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${reqs[*]}" ]; then
  log "setting up the peers' Python in $venv"
  rm -rf "$venv"
  /usr/bin/python3 -m venv --system-site-packages "$venv" || die "could not create $venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${reqs[0]}" "${reqs[1]}" \
    "${reqs[2]}" "${reqs[3]}" || die "pip install of onnxruntime/onnx/transformers failed"
  # Optional peers: a missing wheel leaves them out of the table (compare.py says so).
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "numpy<2" ctranslate2 \
    || log "ctranslate2 did not install: CTranslate2 is left out"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "numpy<2" matplotlib \
    || log "matplotlib did not install: no plot"
  echo "${reqs[*]}" > "$stamp"
fi
"$venv/bin/python" -c "import torch" 2>/dev/null \
  || die "torch does not import in $venv (Debian's python3-torch for /usr/bin/python3 expected)"

# encc: build, compile both artifacts.
if [ "${ENCC_PEERS_NO_BUILD:-0}" != 1 ]; then
  install_deps
  build
fi
[ -x "$ENCC_BUILD/bin/encc" ] && [ -x "$ENCC_BUILD/bin/encc_bench" ] && [ -f "$ENCC_BUILD/lib/libencrt.so" ] \
  || die "$ENCC_BUILD lacks bin/encc, bin/encc_bench or lib/libencrt.so (build first, or unset ENCC_PEERS_NO_BUILD)"
if [ -n "${ENCC_MINILM_DIR:-}" ]; then
  minilm_dir="$ENCC_MINILM_DIR"
  [ -f "$minilm_dir/model.safetensors" ] || die "ENCC_MINILM_DIR=$minilm_dir has no model.safetensors"
else
  minilm_dir="$(fetch_minilm)"
fi
extra=()
if [ "$model" = bert-base ]; then
  name=bert-base-random
  model_dir="$ENCC_CACHE/models/$name"
  if [ ! -f "$model_dir/model.safetensors" ]; then
    log "creating $model_dir (BertModel with torch's random init, seed 0)"
    rm -rf "$model_dir.partial" && mkdir -p "$model_dir.partial"
    "$venv/bin/python" - "$here/../models/bert-base-uncased-shaped/config.json" "$model_dir.partial" <<'PY' \
      || die "could not create the BERT-base model"
import sys, torch
from transformers import BertConfig, BertModel
torch.manual_seed(0)
model = BertModel(BertConfig.from_json_file(sys.argv[1])).eval()
model.save_pretrained(sys.argv[2], safe_serialization=True)
PY
    cp "$minilm_dir/vocab.txt" "$model_dir.partial/" || die "no vocab.txt in $minilm_dir"
    rm -rf "$model_dir" && mv "$model_dir.partial" "$model_dir"
  fi
  extra=(--tag bert-base --runs 8)
else
  name=all-MiniLM-L6-v2
  model_dir="$minilm_dir"
fi
art="$ENCC_BUILD/bench/peers"
mkdir -p "$art"
log "encc compile $name (fp32, int8)"
"$ENCC_BUILD/bin/encc" compile "$model_dir" -o "$art/$name.encm" -q
"$ENCC_BUILD/bin/encc" compile "$model_dir" -o "$art/$name-int8.encm" --quantize=int8 -q

log "running the comparison"
# Later options win: a --runs in the user's arguments overrides the model's default.
exec "$venv/bin/python" "$here/compare.py" --model-dir "$model_dir" --model-name "$name" \
  --encc-build "$ENCC_BUILD" --fp32 "$art/$name.encm" --int8 "$art/$name-int8.encm" \
  --cache "$ENCC_CACHE/peers" --out "$here" "${extra[@]}" "${args[@]}"

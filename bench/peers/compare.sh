#!/usr/bin/env bash
# encc vs ONNX Runtime (fp32 with its transformer optimiser, int8 quantize_dynamic),
# CTranslate2 (fp32, int8) and PyTorch (fp32 eager) on all-MiniLM-L6-v2: same machine,
# same token ids, 1 and 2 threads, one run. Prints a table of latencies and ratios vs
# encc, checks every peer's output against encc's, writes bench/peers/results.json and
# bench/peers/compare.svg.
#
#   bench/peers/compare.sh [compare.py options, e.g. --threads 2 --runs 30 --skip torch]
#
# The peers are never product dependencies: they go into a venv of their own
# ($ENCC_CACHE/peers-venv, over Debian's python3-torch: PyPI's default torch wheel pulls
# gigabytes of CUDA). Environment: ENCC_BUILD (build dir, default build/), ENCC_MINILM_DIR
# (model folder, else fetched), ENCC_PEERS_NO_BUILD=1 (use the existing build as is).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../../scripts/lib.sh"

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
  model_dir="$ENCC_MINILM_DIR"
  [ -f "$model_dir/model.safetensors" ] || die "ENCC_MINILM_DIR=$model_dir has no model.safetensors"
else
  model_dir="$(fetch_minilm)"
fi
art="$ENCC_BUILD/bench/peers"
mkdir -p "$art"
log "encc compile (fp32, int8)"
"$ENCC_BUILD/bin/encc" compile "$model_dir" -o "$art/all-MiniLM-L6-v2.encm" -q
"$ENCC_BUILD/bin/encc" compile "$model_dir" -o "$art/all-MiniLM-L6-v2-int8.encm" --quantize=int8 -q

log "running the comparison"
exec "$venv/bin/python" "$here/compare.py" --model-dir "$model_dir" --encc-build "$ENCC_BUILD" \
  --fp32 "$art/all-MiniLM-L6-v2.encm" --int8 "$art/all-MiniLM-L6-v2-int8.encm" \
  --cache "$ENCC_CACHE/peers" --out "$here" "$@"

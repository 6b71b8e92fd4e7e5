#!/usr/bin/env bash
# Shared set-up for tools/demo.sh and tools/test.sh: installs the Debian packages clusterdyn
# needs (only those missing), then configures and builds into build/ (Release).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(build-essential cmake pkg-config libeigen3-dev libtinyxml2-dev libspdlog-dev
          libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev gfortran python3
          python3-numpy python3-pytest python3-matplotlib python3-setuptools python3-pip graphviz
          clang libclang-rt-14-dev   # clang + libFuzzer runtime: tools/sanitize.sh fuzz stage
          clang-format clang-tidy)   # format and clang-tidy stages of tools/test.sh
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

JOBS="${JOBS:-$(nproc)}"
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
fi
cmake --build build -j "$JOBS" ${BUILD_TARGETS:+--target $BUILD_TARGETS}

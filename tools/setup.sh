#!/usr/bin/env bash
# Shared set-up for tools/demo.sh and tools/test.sh:
#   1. installs the Debian packages clusterdyn needs (only those missing);
#   2. creates the project's Python environment .venv/ (the one interpreter of the tests, the
#      examples and the benchmarks) from python3 on PATH, and installs tools/requirements-dev.txt
#      into it from PyPI: numpy, pytest, matplotlib, scikit-build-core, and the anchors Pinocchio
#      (pin) and MuJoCo (mujoco). Set CLUSTERDYN_NO_PIP=1 to skip the PyPI step (the anchor tests
#      then report themselves skipped, naming the missing package);
#   3. configures and builds into build/ (Release) with that interpreter.
# The library itself needs only Eigen, tinyxml2 and spdlog from Debian; PyPI packages serve the
# Python package, the tests and the benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(build-essential cmake pkg-config ccache libeigen3-dev libtinyxml2-dev libspdlog-dev
          libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev gfortran
          python3 python3-venv graphviz valgrind
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

# ---- the Python environment ------------------------------------------------------------------
VENV="$PWD/.venv"
if [ ! -x "$VENV/bin/python" ]; then
  base=$(command -v python3 || echo /usr/bin/python3)
  echo "== creating $VENV from $base ($("$base" --version 2>&1))"
  "$base" -m venv "$VENV" 2>/dev/null || /usr/bin/python3 -m venv "$VENV"
fi
REQ=tools/requirements-dev.txt
stamp="$VENV/.clusterdyn-requirements"
if [ "${CLUSTERDYN_NO_PIP:-0}" = 1 ]; then
  echo "== pip: skipped (CLUSTERDYN_NO_PIP=1)"
elif ! cmp -s "$REQ" "$stamp"; then
  echo "== pip install -r $REQ into $VENV"
  if "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQ"; then
    cp "$REQ" "$stamp"
  else
    echo "== pip: FAILED; the tests that need a missing package report themselves skipped" >&2
  fi
fi

JOBS="${JOBS:-$(nproc)}"
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$VENV/bin/python" "$@"
fi
cmake --build build -j "$JOBS" ${BUILD_TARGETS:+--target $BUILD_TARGETS}

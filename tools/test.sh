#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs every test with ctest; then the
# sanitizer and fuzzing stage (tools/sanitize.sh: ASan+UBSan suite in build-asan/, TSan
# threading test in build-tsan/, libFuzzer smoke runs in build-fuzz/).
# CLUSTERDYN_SKIP_SANITIZERS=1 skips that stage for quick local runs (CI never sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
t_all=$SECONDS
bash tools/setup.sh
echo "== set-up and build: $((SECONDS - t_all)) s"

# ---- format stage: clang-format --dry-run --Werror over the C/C++ files of src/ include/ capi/
# tools/ tests/ (minus tools/format-exclude.txt). Opt out with CLUSTERDYN_SKIP_FORMAT_CHECK=1.
if [ "${CLUSTERDYN_SKIP_FORMAT_CHECK:-0}" = 1 ]; then
  echo "== format check: SKIPPED (CLUSTERDYN_SKIP_FORMAT_CHECK=1)"
elif ! command -v clang-format >/dev/null; then
  echo "== format check: SKIPPED (clang-format is not installed)"
else
  echo "== format check"
  find src include capi tools tests -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \
    -o -name '*.c' \) | sort | grep -vxF -f <(grep -v '^#' tools/format-exclude.txt) |
    xargs clang-format --dry-run --Werror
fi
bash tools/check_paths.sh
# The checked-in ctypes signatures (python/clusterdyn/_signatures.py) are those of clusterdyn.h.
python3 capi/generate_ctypes.py --check
start=$SECONDS
(cd build && ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 600)
echo "== tests: $((SECONDS - start)) s"

# ---- clang-tidy stage: the checks of .clang-tidy, warnings as errors, over the library (src/)
# and the C layer (capi/*.cpp), with build/compile_commands.json. Opt out with
# CLUSTERDYN_SKIP_TIDY=1 (CI never sets it).
if [ "${CLUSTERDYN_SKIP_TIDY:-0}" = 1 ]; then
  echo "== clang-tidy: SKIPPED (CLUSTERDYN_SKIP_TIDY=1)"
elif ! command -v run-clang-tidy >/dev/null; then
  echo "== clang-tidy: SKIPPED (clang-tidy is not installed)"
else
  start=$SECONDS
  echo "== clang-tidy (src/, capi/)"
  if ! run-clang-tidy -quiet -p build -j "${JOBS:-$(nproc)}" "^$PWD/(src/[a-z]+|capi)/[^/]*\.cpp\$" \
      >build/clang-tidy.log 2>&1; then
    grep -E -A4 "(error|warning):" build/clang-tidy.log | head -n 200 || true
    echo "== clang-tidy: FAILED (full log: build/clang-tidy.log)"
    exit 1
  fi
  echo "== clang-tidy: $((SECONDS - start)) s"
fi
bash tools/sanitize.sh
echo "== tools/test.sh: all stages passed in $((SECONDS - t_all)) s"

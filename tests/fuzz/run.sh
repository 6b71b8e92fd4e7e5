#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz for a fixed time from its seed corpus, then replays
# the saved crash inputs of tests/fuzz/regressions/. Usage:
#   tests/fuzz/run.sh BUILD_DIR [SECONDS] [extra libFuzzer flags, e.g. -runs=1000000 -jobs=2]
# Seeds: fuzz_urdf starts from models/*.urdf (and ../shared/urdfplus/*.urdf when present),
# fuzz_capi from one input per (model, function) pair. Fails on any crash or sanitizer report;
# the crashing input is written to BUILD_DIR/fuzz-artifacts/.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD="${1:?usage: tests/fuzz/run.sh BUILD_DIR [SECONDS] [libFuzzer flags]}"
SECS="${2:-60}"
shift $(($# >= 2 ? 2 : 1))
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

work="$BUILD/fuzz-corpus"
art="$BUILD/fuzz-artifacts"
mkdir -p "$work/urdf" "$work/capi" "$art"
cp models/*.urdf "$work/urdf/"
if compgen -G "../shared/urdfplus/*.urdf" >/dev/null; then cp ../shared/urdfplus/*.urdf "$work/urdf/"; fi
# fuzz_capi seeds: byte 0 selects the model (quadruped, four-bar, four-bar with cut loops),
# byte 1 the function (0-19 C compute calls, 20-30 constraint calls, 31 a fuzzed constraint
# set); zero bytes after that mean "expected lengths, reference configuration, small values".
for m in 0 1 2; do
  for fn in $(seq 0 31); do
    { printf "\\x$(printf %02x $m)\\x$(printf %02x $fn)"; head -c 256 /dev/zero; } \
      >"$work/capi/seed_${m}_${fn}"
  done
done

status=0
for target in urdf capi; do
  bin="$BUILD/tests/fuzz/fuzz_$target"
  flags=(-max_total_time="$SECS" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1
         -artifact_prefix="$art/$target-")
  [ "$target" = urdf ] && flags+=(-dict=tests/fuzz/urdf.dict -max_len=32768)
  [ "$target" = capi ] && flags+=(-max_len=4096)
  echo "== fuzz_$target: ${SECS} s"
  "$bin" "${flags[@]}" "$@" "$work/$target" 2>&1 | tail -n 25 || status=1
  # Replay the recorded regressions (each must now pass).
  if compgen -G "tests/fuzz/regressions/$target/*" >/dev/null; then
    "$bin" tests/fuzz/regressions/$target/* >/dev/null 2>&1 || { echo "regression failed"; status=1; }
  fi
done
exit $status

#!/usr/bin/env bash
# Sanitizer and fuzzing stage of CI (called by tools/test.sh after the ordinary test run):
#   1. build-asan/: the whole test suite built with AddressSanitizer + UndefinedBehaviorSanitizer
#      (gcc, benchmarks off) and run with ctest;
#   2. build-tsan/: the C API threading test (capi/tests/test_capi_threads.cpp) under
#      ThreadSanitizer;
#   3. build-fuzz/: the libFuzzer targets of tests/fuzz (clang), each run for FUZZ_SECONDS
#      (default 60) from its seed corpus, when clang with libFuzzer is installed.
# Any sanitizer report fails the stage (halt_on_error). Environment:
#   CLUSTERDYN_SKIP_SANITIZERS=1  skip everything (quick local runs; .ci/run never sets it)
#   CLUSTERDYN_SKIP_FUZZ=1        skip step 3 only
#   FUZZ_SECONDS=n                length of each fuzz smoke run
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${CLUSTERDYN_SKIP_SANITIZERS:-0}" = "1" ]; then
  echo "== sanitizers: skipped (CLUSTERDYN_SKIP_SANITIZERS=1)"
  exit 0
fi

JOBS="${JOBS:-$(nproc)}"
LAUNCHER=()  # ccache: CMakeLists.txt adds it itself (CLUSTERDYN_CCACHE)
SHARED=()
[ -n "${CLUSTERDYN_SHARED_DIR:-}" ] && SHARED=(-DCLUSTERDYN_SHARED_DIR="$CLUSTERDYN_SHARED_DIR")

export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"

stage_start=$SECONDS

# ---- 1. AddressSanitizer + UndefinedBehaviorSanitizer: the whole suite -----------------------
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
echo "== build-asan: building the test suite with $SAN"
# -O1 -g1 (line tables): the suite compiles about a third faster than at -O2 -g, and the reports
# still name file:line.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLUSTERDYN_BUILD_BENCHMARKS=OFF \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  "${LAUNCHER[@]}" "${SHARED[@]}" \
  -DCMAKE_C_FLAGS="$SAN" -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_Fortran_FLAGS="$SAN" \
  -DCMAKE_EXE_LINKER_FLAGS="$SAN" -DCMAKE_SHARED_LINKER_FLAGS="$SAN" >/dev/null
cmake --build build-asan -j "$JOBS"
# Excluded under ASan, with the reason:
#  - NoAlloc.* / ClusterNoAlloc.* / ConstraintsNoAlloc.* / ForcesNoAlloc.* (tests/test_*no_alloc.cpp),
#    capi_no_allocation (capi/tests/test_capi_alloc.cpp) and capi_batch (its own malloc
#    interposer) replace or interpose malloc/operator new to count allocations, which ASan
#    itself owns;
#  - capi_python_ctypes*, capi_example_python, python_*: dlopen an ASan-instrumented library into
#    an uninstrumented python3 (ASan must be the first library loaded);
#  - capi_install, capi_install_cxx: the installed consumers are built and run without the
#    sanitizer runtime (the C++ one links the instrumented static archive: undefined __asan_*);
#  - readme_demo_script: runs tools/demo.sh, i.e. the ordinary build/ (already tested above).
EXCLUDE='^(NoAlloc\.|ClusterNoAlloc\.|ConstraintsNoAlloc\.|ForcesNoAlloc\.|capi_batch$|capi_python_ctypes_constraints$|python_.*|capi_no_allocation$|capi_python_ctypes$|capi_example_python$|capi_install$|capi_install_cxx$|readme_demo_script$)'
(cd build-asan && ctest --output-on-failure -j "$JOBS" --timeout 900 -E "$EXCLUDE|fortran")
# The Fortran programs, with two ASan checks off that only see gfortran's runtime: LeakSanitizer
# (a main program's allocatable arrays are implicitly SAVEd, never deallocated) and the strndup
# interceptor (libgfortran's format parser reads fixed-length format literals with strndup).
(cd build-asan && ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0:intercept_strndup=0" \
  ctest --output-on-failure -j "$JOBS" --timeout 900 -E "$EXCLUDE" -R fortran)
echo "== build-asan: done in $((SECONDS - stage_start)) s"

# ---- 2. ThreadSanitizer: the C API threading test --------------------------------------------
t0=$SECONDS
TSAN="-fsanitize=thread -fno-omit-frame-pointer"
echo "== build-tsan: building capi_threads_test with $TSAN"
# -O1 -g1 as for ASan: the library compiles faster and the reports still name file:line.
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLUSTERDYN_BUILD_BENCHMARKS=OFF \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  "${LAUNCHER[@]}" "${SHARED[@]}" \
  -DCMAKE_C_FLAGS="$TSAN" -DCMAKE_CXX_FLAGS="$TSAN" \
  -DCMAKE_EXE_LINKER_FLAGS="$TSAN" -DCMAKE_SHARED_LINKER_FLAGS="$TSAN" >/dev/null
cmake --build build-tsan -j "$JOBS" --target capi_threads_test
(cd build-tsan && ctest --output-on-failure --timeout 900 -R '^capi_threads$')
echo "== build-tsan: done in $((SECONDS - t0)) s"

# ---- 3. libFuzzer smoke runs -----------------------------------------------------------------
if [ "${CLUSTERDYN_SKIP_FUZZ:-0}" = "1" ]; then
  echo "== fuzz: skipped (CLUSTERDYN_SKIP_FUZZ=1)"
elif ! command -v clang++ >/dev/null 2>&1; then
  echo "== fuzz: skipped (clang++ not installed)"
else
  t0=$SECONDS
  # -O1 -g1: libFuzzer's recommended optimisation level; the library compiles faster.
  cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLUSTERDYN_FUZZ=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCLUSTERDYN_BUILD_TESTS=OFF -DCLUSTERDYN_BUILD_BENCHMARKS=OFF \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${LAUNCHER[@]}" >/dev/null
  cmake --build build-fuzz -j "$JOBS" --target clusterdyn_fuzz_targets
  bash tests/fuzz/run.sh build-fuzz "${FUZZ_SECONDS:-60}"
  echo "== fuzz: done in $((SECONDS - t0)) s"
fi
echo "== sanitizers: all stages passed in $((SECONDS - stage_start)) s"

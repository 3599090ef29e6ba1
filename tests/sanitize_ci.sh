#!/bin/bash
# sanitize_ci.sh [BUILD_DIR [WHEEL_DATA_DIR]] — the CI sanitizer job.
# Configures BUILD_DIR (default: <repo>/build-asan) with ONNX2CL_SANITIZE=ON: ASan + UBSan
# (-fno-sanitize-recover) for the compiler, the runtime and the tests, and — through
# ONNX2CL_SANITIZE_FLAGS — for the executables onnx2cl generates in the tests. Builds everything,
# then runs the unit and bad-input tiers (not slow) and the tiny SD model tests. LeakSanitizer stays on for our code;
# tests/lsan.supp only silences leaks inside the OpenCL ICD loader / PoCL / LLVM.
# WHEEL_DATA_DIR: the onnx wheel's backend data fetched for the main build (same test list, no
# "missing data" warning). Last line: "sanitizer: N passed, N failed" (build + each test); exit
# status 1 on any failure.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
b=${1:-$src/build-asan}; wheel=${2:-}
jobs=$(nproc)
. "$src/.ci/lib.sh"
mkdir -p "$b/ci"
extra=(); [ -n "$wheel" ] && extra+=(-DONNX_WHEEL_TESTDATA_DIR="$wheel")
ci_step sanitizer "$b/ci" configure cmake -S "$src" -B "$b" -DONNX2CL_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra[@]}"
ci_step sanitizer "$b/ci" build cmake --build "$b" -j"$jobs"
export ASAN_OPTIONS="detect_leaks=1:check_initialization_order=1:strict_init_order=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$src/tests/lsan.supp:print_suppressions=0"
# unit + bad-input tiers, and the three tiny SD models end to end (the fusion-numerics tests of
# the models tier compile every model twice and take minutes under ASan: they run in the main job)
ci_ctest sanitizer "$b/ci/unit-bad-input.log" --test-dir "$b" -L 'unit|bad-input' -LE slow -j"$jobs" --output-on-failure --timeout 900
ci_ctest sanitizer "$b/ci/models.log" --test-dir "$b" -R '^models\.(unet|vae_decoder|text_encoder)$' -j"$jobs" --output-on-failure --timeout 900
ci_verdict sanitizer

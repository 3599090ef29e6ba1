#!/bin/bash
# .ci/clang.sh BUILD_DIR [WHEEL_DATA_DIR] — the clang job of CI: configures BUILD_DIR with clang
# (Debian 12's default clang 14; $CLANG overrides), builds everything (compiler, runtime, tests)
# with -Wall -Wextra, fails on any warning, and runs the unit tier (host only, not slow).
# WHEEL_DATA_DIR: the onnx wheel's backend data already fetched for the main build (configures
# the same test list, without a "missing data" warning).
# Last line: "clang: N passed, N failed" (build checks + unit tests); exit status 1 on any failure.
set -u
b=$1; wheel=${2:-}
src=$(cd "$(dirname "$0")/.." && pwd)
. "$src/.ci/lib.sh"
mkdir -p "$b/ci"
extra=(); [ -n "$wheel" ] && extra+=(-DONNX_WHEEL_TESTDATA_DIR="$wheel")
ci_step clang "$b/ci" configure cmake -S "$src" -B "$b" -DCMAKE_C_COMPILER="${CLANG:-clang}" \
        -DCMAKE_CXX_COMPILER="${CLANGXX:-clang++}" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo "${extra[@]}"
ci_step clang "$b/ci" build cmake --build "$b" -j"$(nproc)"
ci_step clang "$b/ci" no-warnings bash -c "! grep -E 'warning:|error:' '$b/ci/build.log'"
ci_ctest clang "$b/ci/unit.log" --test-dir "$b" -L unit -LE slow -j"$(nproc)" --output-on-failure --timeout 300
ci_verdict clang

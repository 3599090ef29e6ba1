#!/bin/bash
# run_fuzz.sh BUILD_DIR SECONDS [EXTRA libFuzzer flags...]
# Runs BUILD_DIR/tests/fuzz/fuzz_load (built with -DONNX2CL_FUZZ=ON, CC=clang-15) for SECONDS of
# wall time on one core. Seeds: every .onnx under tests/ smaller than 64 KiB and the ONNX backend
# node-test models (Debian libonnx-testdata). The growing corpus lives in BUILD_DIR/fuzz/corpus
# (kept between runs); crashes are written to BUILD_DIR/fuzz/artifacts/ — turn each one into a
# tests/hostile/hand/ case and a fix. The log is BUILD_DIR/fuzz/fuzz.log.
set -eu
b=$(cd "$1" && pwd); secs=$2; shift 2
src=$(cd "$(dirname "$0")/../.." && pwd)
exe=$b/tests/fuzz/fuzz_load
[ -x "$exe" ] || { echo "run_fuzz.sh: $exe not built (configure with -DONNX2CL_FUZZ=ON)"; exit 2; }
seeds=$b/fuzz/seeds corpus=$b/fuzz/corpus art=$b/fuzz/artifacts
mkdir -p "$seeds" "$corpus" "$art"
if [ -z "$(ls -A "$seeds")" ]; then
  find "$src/tests" -name '*.onnx' -size -64k | while read -r f; do
    cp "$f" "$seeds/$(echo "${f#$src/}" | tr / _)"; done
  td=${ONNX_TESTDATA_DIR:-/usr/include/onnx/backend/test/data}
  for f in "$td"/node/*/model.onnx "$td"/simple/*/model.onnx; do
    [ -f "$f" ] && cp "$f" "$seeds/$(basename "$(dirname "$f")").onnx"; done
fi
echo "seeds: $(ls "$seeds" | wc -l), corpus: $(ls "$corpus" | wc -l)"
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$exe" "$corpus" "$seeds" -artifact_prefix="$art/" -max_total_time="$secs" -timeout=20 \
  -rss_limit_mb=4096 -max_len=65536 -close_fd_mask=3 -print_final_stats=1 "$@" 2>&1 | tee "$b/fuzz/fuzz.log" | grep -v '^#[0-9]*.*\(NEW\|REDUCE\|pulse\)' || true

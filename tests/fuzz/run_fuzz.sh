#!/bin/bash
# run_fuzz.sh BUILD_DIR SECONDS [TARGET] [EXTRA libFuzzer flags...]
# Runs BUILD_DIR/tests/fuzz/TARGET (fuzz_load, the default, fuzz_input, fuzz_safetensors or fuzz_desc; built with
# -DONNX2CL_FUZZ=ON, CC=clang-15) for SECONDS of wall time on one core.
# Seeds — fuzz_load: every .onnx under tests/ smaller than 64 KiB and the ONNX backend node-test
# models (Debian libonnx-testdata); fuzz_input: a few command lines (--input/--output specs)
# each followed by a tensor file: the .npy files under tests/ and models/tiny, the backend's
# input_0.pb files, and the files of tests/fuzz/input_corpus/; fuzz_safetensors: the
# good and malformed files of tests/weights_from/; fuzz_desc: tests/fuzz/desc_corpus/ (a small .o2d).
# The growing corpus lives in BUILD_DIR/fuzz/TARGET/corpus (kept between runs); crashes are
# written to BUILD_DIR/fuzz/TARGET/artifacts/ — turn each one into a regression file
# (tests/hostile/hand/ for fuzz_load, tests/fuzz/input_corpus/ for fuzz_input) and a fix.
# The log is BUILD_DIR/fuzz/TARGET/fuzz.log.
set -eu
b=$(cd "$1" && pwd); secs=$2; shift 2
target=fuzz_load
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then target=$1; shift; fi
src=$(cd "$(dirname "$0")/../.." && pwd)
exe=$b/tests/fuzz/$target
[ -x "$exe" ] || { echo "run_fuzz.sh: $exe not built (configure with -DONNX2CL_FUZZ=ON)"; exit 2; }
w=$b/fuzz/$target
seeds=$w/seeds corpus=$w/corpus art=$w/artifacts
mkdir -p "$seeds" "$corpus" "$art"
td=${ONNX_TESTDATA_DIR:-/usr/include/onnx/backend/test/data}
leaks=0
if [ "$target" = fuzz_load ] && [ -z "$(ls -A "$seeds")" ]; then
  find "$src/tests" -name '*.onnx' -size -64k | while read -r f; do
    cp "$f" "$seeds/$(echo "${f#$src/}" | tr / _)"; done
  for f in "$td"/node/*/model.onnx "$td"/simple/*/model.onnx; do
    [ -f "$f" ] && cp "$f" "$seeds/$(basename "$(dirname "$f")").onnx"; done
elif [ "$target" = fuzz_input ]; then
  leaks=1  # the runtime's input path must not leak, whatever the input
  if [ -z "$(ls -A "$seeds")" ]; then
    lines=("--input x=t.npy --input ids=t.pb --input h=t.npy --input s=t.pb --output y=o.npy"
           "--input=x=t.pb --input=ids=t.npy --input=h=t.pb --input=s=t.npy --output-dir od --bench 2"
           "--input s=t.npy --input x=t.npy --input h=t.npy --input ids=t.npy --output y/2=t.npy --device 0")
    i=0
    { find "$src/tests" "$src/models/tiny" -name '*.npy' -size -16k
      ls "$td"/node/*/test_data_set_0/input_0.pb | awk 'NR % 8 == 0'; } | while read -r f; do
      i=$((i + 1)); printf '%s\n' "${lines[$((i % 3))]}" > "$seeds/s$i"; cat "$f" >> "$seeds/s$i"; done
  fi
  cp "$src"/tests/fuzz/input_corpus/* "$seeds/" 2>/dev/null || true
elif [ "$target" = fuzz_safetensors ]; then
  leaks=1  # the reader allocates from the graph arena only: nothing may leak
  cp "$src"/tests/weights_from/*.safetensors "$src"/tests/fuzz/safetensors_found/* "$seeds/"
elif [ "$target" = fuzz_desc ]; then
  leaks=1  # every read descriptor is freed
  cp "$src"/tests/fuzz/desc_corpus/* "$seeds/"
fi
echo "$target: seeds: $(ls "$seeds" | wc -l), corpus: $(ls "$corpus" | wc -l)"
export ASAN_OPTIONS=detect_leaks=$leaks:allocator_may_return_null=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$exe" "$corpus" "$seeds" -artifact_prefix="$art/" -max_total_time="$secs" -timeout=20 \
  -rss_limit_mb=4096 -max_len=65536 -close_fd_mask=3 -print_final_stats=1 "$@" 2>&1 | tee "$w/fuzz.log" | grep -v '^#[0-9]*.*\(NEW\|REDUCE\|pulse\)' || true

#!/bin/bash
# install_test.sh BUILD_DIR WORK MODEL — installs onnx2cl into WORK/prefix, then uses the
# installed binary (no environment variables, run from another folder) to compile MODEL into an
# executable and run it: the install layout is self-contained.
set -euo pipefail
build=$1; work=$2; model=$3
rm -rf "$work"; mkdir -p "$work/run"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cd "$work/run"
# no environment but the sanitizer settings of a sanitizer build
keep=(); for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do [ -n "${!v:-}" ] && keep+=("$v=${!v}"); done
env -i PATH=/usr/bin:/bin HOME="$work" "${keep[@]}" "$work/prefix/bin/onnx2cl" "$model" -o m --shape x=2,3
x=$(dirname "$model")/x_2x3.npy
env -i PATH=/usr/bin:/bin HOME="$work" "${keep[@]}" ONNX2CL_CACHE_DIR="$work/cache" ./m --input x="$x" --output y=y.npy
test -s y.npy && echo "installed onnx2cl compiled and ran the model"

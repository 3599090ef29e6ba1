#!/bin/bash
# install_test.sh BUILD_DIR WORK MODEL SRC_DIR CC — what `cmake --install` gives, used as a
# stranger would:
# 1. the installed onnx2cl (no environment variables, run from another folder) compiles MODEL
#    (tests/bad_input/symbolic.onnx, y = Relu(x + b)) into an executable that runs;
# 2. the layout: include/onnx2cl_rt.h (what generated code includes), lib/onnx2cl/libonnx2cl_rt.a,
#    lib/cmake/onnx2cl/onnx2clConfig.cmake, lib/pkgconfig/onnx2cl.pc, the LICENSE;
# 3. pkg-config: tests/cli/api_main.c + the generated relu.c/relu.h build with
#    `cc $(pkg-config --cflags --libs onnx2cl)` alone and check their values exactly;
# 4. find_package: examples/app (outside the tree, onnx2cl_add_model compiling the tiny CLIP text
#    encoder at build time) configures and builds against the installed package and matches the
#    PyTorch reference.
set -euo pipefail
build=$1; work=$2; model=$3; src=$4; cc=$5
rm -rf "$work"; mkdir -p "$work/run"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
p=$work/prefix
cd "$work/run"
# no environment but the sanitizer settings of a sanitizer build
keep=(); for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do [ -n "${!v:-}" ] && keep+=("$v=${!v}"); done
env -i PATH=/usr/bin:/bin HOME="$work" "${keep[@]}" "$p/bin/onnx2cl" "$model" -o m --shape x=2,3
x=$(dirname "$model")/x_2x3.npy
env -i PATH=/usr/bin:/bin HOME="$work" "${keep[@]}" ONNX2CL_CACHE_DIR="$work/cache" ./m --input x="$x" --output y=y.npy
test -s y.npy && test -s m.h && echo "1. installed onnx2cl compiled and ran the model (m, m.c, m.h, m.weights)"

libdir=$(cd "$p" && ls -d lib*/pkgconfig | head -1); libdir=${libdir%/pkgconfig}
for f in include/onnx2cl_rt.h "$libdir/onnx2cl/libonnx2cl_rt.a" "$libdir/cmake/onnx2cl/onnx2clConfig.cmake" \
         "$libdir/cmake/onnx2cl/onnx2cl_add_model.cmake" "$libdir/pkgconfig/onnx2cl.pc" share/doc/onnx2cl/LICENSE; do
  test -f "$p/$f" || { echo "FAIL: $p/$f not installed"; exit 1; }
done
echo "2. layout: include/onnx2cl_rt.h, $libdir/onnx2cl/libonnx2cl_rt.a, CMake package, onnx2cl.pc, LICENSE"

export ONNX2CL_CACHE_DIR=$work/cache
"$p/bin/onnx2cl" "$model" -o "$work/run/relu.c" --name relu --no-main --shape x=2,3
flags=$(PKG_CONFIG_PATH="$p/$libdir/pkgconfig" pkg-config --cflags --libs onnx2cl)
"$cc" -std=c11 -Wall -Wextra -Werror -I"$work/run" "$src/tests/cli/api_main.c" "$work/run/relu.c" $flags -o api
./api "$work/run/relu.weights"
echo "3. pkg-config: cc \$(pkg-config --cflags --libs onnx2cl) = $flags"

cmake -S "$src/examples/app" -B "$work/app" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_C_COMPILER="$cc" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$work/app" >/dev/null
"$work/app/app"
echo "4. examples/app built with find_package(onnx2cl) + onnx2cl_add_model and matches PyTorch"

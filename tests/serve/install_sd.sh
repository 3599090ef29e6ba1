#!/bin/bash
# install_sd.sh BUILD_DIR WORK CC — what `cmake --install` gives of libonnx2cl-sd and the server,
# used as an outside project would (no environment beyond the cache folder):
# 1. the layout: bin/onnx2cl-sd, include/onnx2cl/sd_session.h, lib/onnx2cl/libonnx2cl-sd.a,
#    lib/pkgconfig/onnx2cl-sd.pc, lib/cmake/onnx2cl/onnx2cl-sd-targets.cmake, the architectures;
# 2. tests/serve/app/app.c built with `cc $(pkg-config --cflags --libs onnx2cl-sd)` alone, and
# 3. the same with find_package(onnx2cl) + onnx2cl::sd: both open the tiny SD 1.5 checkpoint through
#    the installed onnx2cl and make the image the installed onnx2cl-sd CLI makes, byte for byte;
# 4. the pkg-config app on the tiny Flux dev single file (the library's SD 3 / Flux loop, where the
#    build has the T5 tokenizer: the .pc file then names libsentencepiece): the CLI's image too.
set -euo pipefail
build=$1 work=$2 cc=$3
here=$(cd "$(dirname "$0")" && pwd)
ckpt=$here/../pipeline/oneshot/tiny_sd15.safetensors
rm -rf "$work"; mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
p=$work/prefix
libdir=$(cd "$p" && ls -d lib*/pkgconfig | head -1); libdir=${libdir%/pkgconfig}
for f in bin/onnx2cl-sd bin/onnx2cl include/onnx2cl/sd_session.h "$libdir/onnx2cl/libonnx2cl-sd.a" \
         "$libdir/pkgconfig/onnx2cl-sd.pc" "$libdir/cmake/onnx2cl/onnx2cl-sd-targets.cmake" \
         share/onnx2cl/arch/tiny_sd15/arch.json; do
  test -f "$p/$f" || { echo "FAIL: $p/$f not installed"; exit 1; }
done
echo "1. layout: bin/onnx2cl-sd, include/onnx2cl/sd_session.h, $libdir/onnx2cl/libonnx2cl-sd.a, onnx2cl-sd.pc, CMake onnx2cl::sd"
export ONNX2CL_CACHE_DIR=$work/cache
prompt="a photo of an astronaut riding a horse on mars"
"$p/bin/onnx2cl-sd" -m "$ckpt" -p "$prompt" -n "blurry, low quality" --steps 4 --cfg 7.5 --seed 42 --scheduler euler \
  --width 32 --height 32 --quiet -o "$work/cli.png" 2> "$work/cli.log" || { cat "$work/cli.log"; exit 1; }
flags=$(PKG_CONFIG_PATH="$p/$libdir/pkgconfig" pkg-config --cflags --libs onnx2cl-sd)
"$cc" -std=c11 -Wall -Wextra -Werror "$here/app/app.c" $flags -o "$work/app_pc"
"$work/app_pc" "$ckpt" "$p/bin/onnx2cl" "$work/cli.png" "$prompt"
echo "2. pkg-config: cc \$(pkg-config --cflags --libs onnx2cl-sd) = $flags"
cmake -S "$here/app" -B "$work/app" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$work/app" >/dev/null
"$work/app/app" "$ckpt" "$p/bin/onnx2cl" "$work/cli.png" "$prompt"
echo "3. find_package(onnx2cl) + target_link_libraries(app onnx2cl::sd)"
if grep -q -- -lsentencepiece "$p/$libdir/pkgconfig/onnx2cl-sd.pc"; then
  flux=$here/../pipeline/flux/tiny_flux_dev.safetensors
  "$p/bin/onnx2cl-sd" -m "$flux" -p "$prompt" -n "blurry, low quality" --steps 4 --cfg 7.5 --seed 42 \
    --width 32 --height 32 --quiet -o "$work/cli_flux.png" 2> "$work/cli_flux.log" || { cat "$work/cli_flux.log"; exit 1; }
  "$work/app_pc" "$flux" "$p/bin/onnx2cl" "$work/cli_flux.png" "$prompt"
  echo "4. the pkg-config app on a Flux single file: the CLI's image"
fi

#!/bin/bash
# .ci/mingw.sh ONNX2CL WORK — the Windows job of CI (MinGW-w64 cross build, no Windows needed).
#   0. every runtime/*.c but platform*.c compiles as strict ISO C11 (no POSIX declarations
#      visible): the OS-specific code stays in runtime/platform.c and platform_proc.c;
#   1. configures + builds the runtime alone for x86_64 Windows (cmake/mingw-w64-x86_64.cmake,
#      -DONNX2CL_RUNTIME_ONLY=ON: no protobuf-c) against the Khronos OpenCL headers and the
#      import library made from cmake/OpenCL.def; -Wall -Wextra, any warning fails;
#   2. compiles models/tiny/text_encoder with the native onnx2cl (ONNX2CL) and checks that every
#      string literal of the generated C fits MSVC's limits (.ci/check_c_literals.py);
#   3. cross-compiles that file (-std=c11 -Wall -Wextra -Werror) + the runtime into a Windows
#      .exe and checks that it imports only KERNEL32.dll, msvcrt.dll and OpenCL.dll;
#   4. the same model compiled with --no-main (as onnx2cl_add_model does) links with
#      examples/app/main.c into a Windows program (app.exe; same imports);
#   5. zlib, libpng, cJSON and libmicrohttpd for MinGW from Debian's source packages
#      (.ci/mingw_deps.sh, into $ONNX2CL_MINGW_DEPS_DIR if set, kept between runs, else WORK/deps),
#      then -DONNX2CL_NO_COMPILER=ON: libonnx2cl-sd.a, onnx2cl-sd.exe (with the HTTP server,
#      `serve`), onnx2cl-ckpt.exe, onnx2cl-run.exe, -Wall -Wextra, any warning fails;
#      onnx2cl-sd.exe imports exactly KERNEL32.dll, msvcrt.dll, OpenCL.dll and WS2_32.dll
#      (Winsock; libgcc, winpthreads, libpng, zlib, cJSON, libmicrohttpd static), the others a
#      subset; its `serve --help` is the server's (run under wine when wine is installed, else
#      its text looked for in the .exe); .ci/mingw_sd_app.c links against libonnx2cl-sd.a.
# Not run: the .exe files themselves. Debian's wine64 (8.0) would add ~700 MB installed (101 MB download)
# to every CI run, more than the rest of the toolchain, and PoCL is not visible inside wine
# without extra setup; the link plus the import check is the test.
# Prints "ok|FAIL mingw <step>" per step, last line "mingw: N passed, N failed"; exit status 1 on
# any failure.
set -u
o2c=$1; work=$2
src=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work"; mkdir -p "$work"
. "$src/.ci/lib.sh"
step() { ci_step mingw "$work" "$@"; }
no_warnings() { ! grep -E 'warning:|error:' "$1"; }
iso_c() {
  local f
  for f in "$src"/runtime/*.c; do
    case "$(basename "$f")" in platform*.c) continue ;; esac
    cc -std=c11 -Wall -Wextra -Werror=implicit-function-declaration -DCL_TARGET_OPENCL_VERSION=120 \
       -fsyntax-only -I"$src/runtime" "$f" || return 1
  done
}
step runtime-iso-c11 iso_c
b=$work/build
step configure cmake -S "$src" -B "$b" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/mingw-w64-x86_64.cmake" \
     -DONNX2CL_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
step build-runtime cmake --build "$b" -j"$(nproc)"
step runtime-warnings no_warnings "$work/build-runtime.log"
step generate "$o2c" "$src/models/tiny/text_encoder/model.onnx" -o "$work/te.c" --shape input_ids=1,77
step literal-limits python3 "$src/.ci/check_c_literals.py" "$work/te.c"
step link-exe x86_64-w64-mingw32-gcc -std=c11 -O2 -Wall -Wextra -Werror -I"$src/runtime" \
     -I"$b/opencl/include" "$work/te.c" "$b/libonnx2cl_rt.a" "$b/opencl/libOpenCL.dll.a" -o "$work/te.exe"
imports() {
  x86_64-w64-mingw32-objdump -p "$work/te.exe" | sed -n 's/.*DLL Name: //p' | LC_ALL=C sort > "$work/imports.txt"
  cat "$work/imports.txt"
  [ "$(tr '\n' ' ' < "$work/imports.txt")" = "KERNEL32.dll OpenCL.dll msvcrt.dll " ]
}
step imports imports
# 4: a --no-main model in a Windows program of its own
step generate-no-main "$o2c" "$src/models/tiny/text_encoder/model.onnx" -o "$work/text_encoder.c" \
     --name text_encoder --no-main --shape input_ids=1,77
step link-app x86_64-w64-mingw32-gcc -std=c11 -O2 -Wall -Wextra -Werror -I"$src/runtime" -I"$work" \
     -I"$b/opencl/include" -DAPP_WEIGHTS='"text_encoder.weights"' -DAPP_INPUT='"input_ids.npy"' \
     -DAPP_REF='"last_hidden_state.npy"' "$work/text_encoder.c" "$src/examples/app/main.c" \
     "$b/libonnx2cl_rt.a" "$b/opencl/libOpenCL.dll.a" -o "$work/app.exe"
dlls() { x86_64-w64-mingw32-objdump -p "$1" | sed -n 's/.*DLL Name: //p' | LC_ALL=C sort | tr '\n' ' '; }
app_imports() { dlls "$work/app.exe"; [ "$(dlls "$work/app.exe")" = "KERNEL32.dll OpenCL.dll msvcrt.dll " ]; }
step app-imports app_imports
# 5: onnx2cl-sd.exe and libonnx2cl-sd
deps=${ONNX2CL_MINGW_DEPS_DIR:-$work/deps}
step deps "$src/.ci/mingw_deps.sh" "$deps"
bs=$work/build-sd
step configure-sd cmake -S "$src" -B "$bs" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/mingw-w64-x86_64.cmake" \
     -DONNX2CL_NO_COMPILER=ON -DONNX2CL_MINGW_DEPS="$deps" -DCMAKE_BUILD_TYPE=RelWithDebInfo
step build-sd cmake --build "$bs" -j"$(nproc)"
step sd-warnings no_warnings "$work/build-sd.log"
sd_imports() {
  local e d
  for e in pipeline/onnx2cl-sd store/onnx2cl-ckpt onnx2cl-run; do
    echo "$e.exe: $(dlls "$bs/$e.exe")"
    for d in $(dlls "$bs/$e.exe"); do
      case $d in KERNEL32.dll|msvcrt.dll|OpenCL.dll|WS2_32.dll) ;; *) echo "unexpected import $d"; return 1 ;; esac
    done
  done
  [ "$(dlls "$bs/pipeline/onnx2cl-sd.exe")" = "KERNEL32.dll OpenCL.dll WS2_32.dll msvcrt.dll " ]
}
step sd-imports sd_imports
# the server is in: `serve --help` prints its usage (wine), or that text is in the .exe and the
# no-server message of sd_serve_none.c is not
serve_help() {
  local exe=$bs/pipeline/onnx2cl-sd.exe
  if command -v wine > /dev/null; then
    WINEDEBUG=-all wine "$exe" serve --help | grep -F 'usage: onnx2cl-sd serve -m CHECKPOINT'
  else
    echo "(no wine: the text of the .exe)"
    grep -qaF 'usage: onnx2cl-sd serve -m CHECKPOINT' "$exe" && echo "serve usage: found" &&
      ! grep -qaF 'built without the HTTP server' "$exe" && echo "no-server message: absent"
  fi
}
step serve-help serve_help
step link-sd-app x86_64-w64-mingw32-gcc -std=c11 -O2 -Wall -Wextra -Werror -I"$src/pipeline" \
     "$src/.ci/mingw_sd_app.c" "$bs/pipeline/libonnx2cl-sd.a" "$bs/libonnx2cl_rt.a" \
     "$bs/opencl/libOpenCL.dll.a" "$deps/lib/libpng16.a" "$deps/lib/libz.a" "$deps/lib/libcjson.a" \
     -static -lpthread -o "$work/sd_app.exe"
ci_verdict mingw

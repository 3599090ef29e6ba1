#!/bin/bash
# .ci/mingw.sh ONNX2CL WORK — the Windows job of CI (MinGW-w64 cross build, no Windows needed).
#   0. every runtime/*.c but platform.c compiles as strict ISO C11 (no POSIX declarations
#      visible): the OS-specific code stays in runtime/platform.c;
#   1. configures + builds the runtime alone for x86_64 Windows (cmake/mingw-w64-x86_64.cmake,
#      -DONNX2CL_RUNTIME_ONLY=ON: no protobuf-c) against the Khronos OpenCL headers and the
#      import library made from cmake/OpenCL.def; -Wall -Wextra, any warning fails;
#   2. compiles models/tiny/text_encoder with the native onnx2cl (ONNX2CL) and checks that every
#      string literal of the generated C fits MSVC's limits (.ci/check_c_literals.py);
#   3. cross-compiles that file (-std=c11 -Wall -Wextra -Werror) + the runtime into a Windows
#      .exe and checks that it imports only KERNEL32.dll, msvcrt.dll and OpenCL.dll.
# Not run: the .exe itself. Debian's wine64 (8.0) would add ~700 MB installed (101 MB download)
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
    [ "$(basename "$f")" = platform.c ] && continue
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
ci_verdict mingw

#!/bin/bash
# oclgrind_ctest.sh BUILD_DIR [CTEST ARGS...] — runs ctest with every OpenCL test on oclgrind's
# simulated device instead of PoCL: makes a private ICD vendors folder naming
# liboclgrind-rt-icd.so (the oclgrind package ships no .icd file), sets OCL_ICD_VENDORS to it,
# ONNX2CL_DEVICE=Oclgrind (honoured by the runtime, generated executables and the kernels_a /
# kernels_b harnesses) and OCLGRIND_BUILD_OPTIONS=-cl-opt-disable (see /work/shared/OCLGRIND.md:
# oclgrind 21.10 miscompiles inlined restrict helpers otherwise), with a separate program cache.
# Example: tests/oclgrind_ctest.sh build -L kernels -R kernels_b
set -euo pipefail
b=$(cd "${1:?usage: oclgrind_ctest.sh BUILD_DIR [ctest args]}" && pwd); shift
lib=${OCLGRIND_ICD:-/usr/lib/oclgrind/liboclgrind-rt-icd.so}
[ -f "$lib" ] || { echo "oclgrind_ctest.sh: $lib not found: apt-get install oclgrind" >&2; exit 1; }
mkdir -p "$b/oclgrind/vendors"
echo "$lib" > "$b/oclgrind/vendors/oclgrind.icd"
export OCL_ICD_VENDORS=$b/oclgrind/vendors ONNX2CL_DEVICE=Oclgrind
export OCLGRIND_BUILD_OPTIONS=${OCLGRIND_BUILD_OPTIONS:--cl-opt-disable}
export ONNX2CL_CACHE_DIR=$b/oclgrind/cache
exec ctest --test-dir "$b" "$@"

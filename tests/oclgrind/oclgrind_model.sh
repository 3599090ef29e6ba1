#!/bin/bash
# oclgrind_model.sh ONNX2CL COMPARE MODEL_DIR WORK_DIR ATOL RTOL KERNELS [onnx2cl flags...]
# Compiles MODEL_DIR/model.onnx, runs it once on oclgrind's simulated device with the kernel
# variants KERNELS (cpu | gpu) and requires:
#   - 0 oclgrind diagnostics (out-of-bounds accesses, global/local data races, barrier or
#     work-group divergence, OpenCL API errors): the oclgrind log must stay empty;
#   - the device really was Oclgrind (from --verbose) and the run exited 0;
#   - every output within ATOL + RTOL*|ref| of MODEL_DIR/ref/<output>.npy.
# O2C_OCLGRIND_DATA=DIR: the inputs and references from DIR/inputs, DIR/ref instead of
# MODEL_DIR's (a model at another --shape without copying the model).
# oclgrind command and options: ../../../shared/OCLGRIND.md (--data-races --check-api, programs
# built with -cl-opt-disable because oclgrind 21.10 mishandles inlined restrict helpers; no
# --uninitialized: false reports on vectors and sub-buffers in that version).
# O2C_OCLGRIND_OPT=1: build the programs with the OpenCL compiler's default optimizations
# instead (no -cl-opt-disable): oclgrind then interprets optimized IR, 3-8x faster (the GPU
# class's register-blocked GEMM/conv tiles are 10-20x more instructions at -O0). Used for the
# whole tiny UNet/VAE in the gpu class (tests/oclgrind/CMakeLists.txt says what it keeps and
# what the -O0 runs still cover); only for programs without inlined restrict helpers (the cpu
# class's fconv.cl has them: oclgrind 21.10 then fails the run loudly, it never passes).
# Exit: 0 clean; 1 on diagnostics, wrong outputs, a failed run, or no oclgrind installed (CI
# must have it: a missing tool fails, it is never skipped).
set -euo pipefail
onnx2cl=$1; compare=$2; dir=$3; work=$4; atol=$5; rtol=$6; kernels=$7; shift 7
command -v oclgrind > /dev/null || { echo "FAIL: oclgrind not installed (apt-get install oclgrind)"; exit 1; }
rm -rf "$work"; mkdir -p "$work/out"
"$onnx2cl" "$dir/model.onnx" -o "$work/model" "$@"
args=()
data=${O2C_OCLGRIND_DATA:-$dir}
for f in "$data"/inputs/*.npy; do n=$(basename "$f" .npy); args+=(--input "$n=$f"); done
log=$work/oclgrind.log
: > "$log"
opts=(--build-options -cl-opt-disable)
optname="-cl-opt-disable"
if [ "${O2C_OCLGRIND_OPT:-0}" = 1 ]; then opts=(); optname="default optimizations"; fi
start=$(date +%s)
status=0
OCLGRIND_LOG=$log OCLGRIND_MAX_ERRORS=${OCLGRIND_MAX_ERRORS:-20} \
  ONNX2CL_CACHE_DIR=${ONNX2CL_CACHE_DIR:-$work/cache} \
  oclgrind --data-races --check-api "${opts[@]}" \
  "$work/model" "${args[@]}" --kernels "$kernels" --output-dir "$work/out" --verbose \
  2> "$work/stderr.txt" || status=$?
# head reads the file itself: `sed | head` under pipefail failed the test (exit 141) whenever
# sed was still writing when head had its 20 lines (a race; it failed one of two CI runs)
head -n 20 "$work/stderr.txt" | sed 's/^/  model: /'
echo "oclgrind run: $(( $(date +%s) - start )) s, exit $status, --kernels $kernels, programs built with $optname"
if ! grep -q "device Oclgrind" "$work/stderr.txt"; then
  echo "FAIL: the model did not run on the Oclgrind device (see $work/stderr.txt)"; exit 1
fi
ndiag=$(grep -c . "$log" || true)
if [ "$ndiag" != 0 ]; then
  echo "FAIL: oclgrind reported diagnostics ($ndiag log lines, $log):"
  head -60 "$log"
  exit 1
fi
[ "$status" = 0 ] || { echo "FAIL: the model exited $status under oclgrind"; exit 1; }
for f in "$data"/ref/*.npy; do
  "$compare" "$work/out/$(basename "$f")" "$f" "$atol" "$rtol" || status=1
done
[ "$status" = 0 ] && echo "oclgrind: 0 diagnostics, outputs match the reference"
exit $status

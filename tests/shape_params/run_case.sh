#!/bin/bash
# run_case.sh ONNX2CL COMPARE CASE_DIR WORK_DIR ATOL RTOL — compiles CASE_DIR/model.onnx once, runs
# the executable on CASE_DIR/inputs/*.npy with each kernel class (--kernels cpu, then gpu: both
# run on any OpenCL device) and compares every output with CASE_DIR/ref/<output>.npy within
# ATOL + RTOL*|ref| (tests/models/compare.c).
set -euo pipefail
onnx2cl=$1; compare=$2; dir=$3; work=$4; atol=$5; rtol=$6
rm -rf "$work"; mkdir -p "$work"
"$onnx2cl" "$dir/model.onnx" -o "$work/model"
args=()
for f in "$dir"/inputs/*.npy; do args+=(--input "$(basename "$f" .npy)=$f"); done
status=0
for k in cpu gpu; do
  mkdir -p "$work/out_$k"
  "$work/model" "${args[@]}" --kernels $k --output-dir "$work/out_$k"
  for f in "$dir"/ref/*.npy; do
    echo -n "$k: "; "$compare" "$work/out_$k/$(basename "$f")" "$f" "$atol" "$rtol" || status=1
  done
done
exit $status

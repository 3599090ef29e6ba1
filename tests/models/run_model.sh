#!/bin/bash
# run_model.sh ONNX2CL COMPARE MODEL_DIR WORK_DIR ATOL RTOL [onnx2cl flags...]
# Compiles MODEL_DIR/model.onnx to an executable, runs it on MODEL_DIR/inputs/*.npy and compares
# every output with MODEL_DIR/ref/<output>.npy (PyTorch reference) within ATOL + RTOL*|ref|.
set -euo pipefail
onnx2cl=$1; compare=$2; dir=$3; work=$4; atol=$5; rtol=$6; shift 6
rm -rf "$work"; mkdir -p "$work/out"
"$onnx2cl" "$dir/model.onnx" -o "$work/model" "$@"
args=()
for f in "$dir"/inputs/*.npy; do n=$(basename "$f" .npy); args+=(--input "$n=$f"); done
"$work/model" "${args[@]}" --output-dir "$work/out" --verbose
status=0
for f in "$dir"/ref/*.npy; do
  n=$(basename "$f")
  "$compare" "$work/out/$n" "$f" "$atol" "$rtol" || status=1
done
exit $status

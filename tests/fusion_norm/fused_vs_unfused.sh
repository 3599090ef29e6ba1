#!/bin/bash
# fused_vs_unfused.sh ONNX2CL COMPARE MODEL_DIR WORK_DIR PASS EXPECT_APPLIED [onnx2cl flags...]
# Compiles MODEL_DIR/model.onnx twice: with every fusion (pass PASS must report exactly
# EXPECT_APPLIED applied patterns in --stats) and with --no-fuse=PASS; runs both on
# MODEL_DIR/inputs/*.npy and checks, for every output: fused vs MODEL_DIR/ref, unfused vs ref,
# and fused vs unfused, each within |d| <= 1e-4 + 1e-3 |expected| (the model tolerance), or
# within MODEL_DIR/tolerance.txt ("ATOL RTOL", e.g. "0 0" for the bit-exact constant groups).
# References: PyTorch for models/tiny, onnxruntime for graphs/ (make_graphs.py).
set -euo pipefail
onnx2cl=$1; compare=$2; dir=$3; work=$4; pass=$5; expect=$6; shift 6
rm -rf "$work"; mkdir -p "$work/fused" "$work/unfused"
"$onnx2cl" "$dir/model.onnx" -o "$work/fused/model" --stats "$@" 2> "$work/fused/stats.txt"
"$onnx2cl" "$dir/model.onnx" -o "$work/unfused/model" --stats --no-fuse="$pass" "$@" 2> "$work/unfused/stats.txt"
line=$(grep -E "^fusion $pass " "$work/fused/stats.txt" || true)
echo "$line"
grep -E "launches" "$work/fused/stats.txt" | sed 's/^/fused:   /'
grep -E "launches" "$work/unfused/stats.txt" | sed "s/^/--no-fuse=$pass: /"
applied=$(echo "$line" | sed -nE 's/.*applied +([0-9]+).*/\1/p')
if [ "$applied" != "$expect" ]; then
  echo "FAIL: $pass applied '$applied' times, expected $expect"; exit 1
fi
args=()
for f in "$dir"/inputs/*.npy; do n=$(basename "$f" .npy); args+=(--input "$n=$f"); done
"$work/fused/model" "${args[@]}" --output-dir "$work/fused/out"
"$work/unfused/model" "${args[@]}" --output-dir "$work/unfused/out"
atol=1e-4; rtol=1e-3
if [ -f "$dir/tolerance.txt" ]; then read -r atol rtol < "$dir/tolerance.txt"; fi
status=0
for f in "$dir"/ref/*.npy; do
  n=$(basename "$f")
  "$compare" "$work/fused/out/$n" "$f" "$atol" "$rtol" || status=1
  "$compare" "$work/unfused/out/$n" "$f" "$atol" "$rtol" || status=1
  "$compare" "$work/fused/out/$n" "$work/unfused/out/$n" "$atol" "$rtol" || status=1
done
exit $status

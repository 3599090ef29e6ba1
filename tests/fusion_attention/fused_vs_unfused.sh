#!/bin/bash
# fused_vs_unfused.sh ONNX2CL COMPARE MODEL_DIR WORK_DIR EXPECT_APPLIED[:REASON] [onnx2cl flags...]
# Compiles MODEL_DIR/model.onnx twice: with every fusion (attention must report exactly
# EXPECT_APPLIED applied patterns in --stats, and, with :REASON, a rejection whose reason
# contains REASON) and with --no-fuse=attention; runs both on
# MODEL_DIR/inputs/*.npy and checks, for every output: fused vs MODEL_DIR/ref, unfused vs ref,
# and fused vs unfused, each within |d| <= 1e-4 + 1e-3 |expected| (the model tolerance).
set -euo pipefail
onnx2cl=$1; compare=$2; dir=$3; work=$4; expect=${5%%:*}; reason=""
case "$5" in *:*) reason=${5#*:} ;; esac
shift 5
rm -rf "$work"; mkdir -p "$work/fused" "$work/unfused"
"$onnx2cl" "$dir/model.onnx" -o "$work/fused/model" --stats "$@" 2> "$work/fused/stats.txt"
"$onnx2cl" "$dir/model.onnx" -o "$work/unfused/model" --stats --no-fuse=attention "$@" 2> "$work/unfused/stats.txt"
line=$(grep -E "^fusion attention " "$work/fused/stats.txt" || true)
echo "$line"
grep -E "launches" "$work/fused/stats.txt" | sed 's/^/fused:   /'
grep -E "launches" "$work/unfused/stats.txt" | sed 's/^/unfused: /'
applied=$(echo "$line" | sed -nE 's/.*applied +([0-9]+).*/\1/p')
if [ "$applied" != "$expect" ]; then
  echo "FAIL: attention applied '$applied' times, expected $expect"; exit 1
fi
if [ -n "$reason" ] && ! echo "$line" | grep -qF -- "$reason"; then
  echo "FAIL: no attention rejection with the reason '$reason'"; exit 1
fi
args=()
for f in "$dir"/inputs/*.npy; do n=$(basename "$f" .npy); args+=(--input "$n=$f"); done
"$work/fused/model" "${args[@]}" --output-dir "$work/fused/out"
"$work/unfused/model" "${args[@]}" --output-dir "$work/unfused/out"
status=0
for f in "$dir"/ref/*.npy; do
  n=$(basename "$f")
  "$compare" "$work/fused/out/$n" "$f" 1e-4 1e-3 || status=1
  "$compare" "$work/unfused/out/$n" "$f" 1e-4 1e-3 || status=1
  "$compare" "$work/fused/out/$n" "$work/unfused/out/$n" 1e-4 1e-3 || status=1
done
exit $status

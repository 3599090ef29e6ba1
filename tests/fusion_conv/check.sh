#!/bin/bash
# check.sh ONNX2CL COMPARE GRAPH_DIR WORK_DIR APPLIED REJECTED LAUNCH_CPU LAUNCH_GPU NF_CPU NF_GPU
#          [onnx2cl flags...]
# The sibling_conv fusion on one graph of make_graphs.py:
#  1. compiles GRAPH_DIR/model.onnx with every fusion and --stats-json: sibling_conv must report
#     exactly APPLIED applied and REJECTED rejected patterns, and the build LAUNCH_CPU /
#     LAUNCH_GPU kernel launches per inference (cpu / gpu kernel class);
#  2. compiles it again with --no-fuse=sibling_conv: 0 applied, NF_CPU / NF_GPU launches, and
#     the same --info FLOPs as the fused build;
#  3. runs the fused build with the cpu and with the gpu kernel class ($ONNX2CL_KERNELS) and the
#     unfused build (cpu class) on GRAPH_DIR/inputs/*.npy; every output must match the
#     onnxruntime reference GRAPH_DIR/ref within |d| <= 1e-4 + 1e-3 |ref|.
# $ONNX2CL_FCONV (inherited) forces a conv kernel form at compile time (codegen/sched_conv.c).
set -euo pipefail
onnx2cl=$1; compare=$2; dir=$3; work=$4; applied=$5; rejected=$6
lc=$7; lg=$8; nc=$9; ng=${10}; shift 10
rm -rf "$work"; mkdir -p "$work"
"$onnx2cl" "$dir/model.onnx" -o "$work/fused" --stats-json "$work/fused.json" "$@"
"$onnx2cl" "$dir/model.onnx" -o "$work/unfused" --stats-json "$work/unfused.json" \
  --no-fuse=sibling_conv "$@"
field() { # field JSON KEY: the integer value of "KEY": N
  sed -nE "s/.*\"$2\": *([0-9]+).*/\1/p" "$1" | head -1
}
pass_field() { # pass_field JSON PASS KEY
  grep -E "\"name\": *\"$2\"" "$1" | sed -nE "s/.*\"$3\": *([0-9]+).*/\1/p"
}
status=0
expect() { # expect WHAT GOT WANT
  if [ "$2" != "$3" ]; then echo "FAIL: $1 is '$2', expected $3"; status=1; else echo "ok: $1 = $2"; fi
}
expect "sibling_conv applied" "$(pass_field "$work/fused.json" sibling_conv applied)" "$applied"
expect "sibling_conv rejected" "$(pass_field "$work/fused.json" sibling_conv rejected)" "$rejected"
expect "launches (cpu)" "$(field "$work/fused.json" kernel_launches)" "$lc"
expect "launches (gpu)" "$(field "$work/fused.json" kernel_launches_gpu)" "$lg"
expect "--no-fuse=sibling_conv: sibling_conv pass listed" \
  "$(grep -c '"name": *"sibling_conv"' "$work/unfused.json" || true)" 0
expect "--no-fuse=sibling_conv: launches (cpu)" "$(field "$work/unfused.json" kernel_launches)" "$nc"
expect "--no-fuse=sibling_conv: launches (gpu)" "$(field "$work/unfused.json" kernel_launches_gpu)" "$ng"
# --info FLOPs: a merged o2c.Conv counts the multiply-adds of every output (driver/info.c)
ff=$("$onnx2cl" "$dir/model.onnx" --info "$@" | sed -nE 's/^flops: ([0-9]+).*/\1/p')
fu=$("$onnx2cl" "$dir/model.onnx" --info --no-fuse=sibling_conv "$@" | sed -nE 's/^flops: ([0-9]+).*/\1/p')
expect "--info flops (fused = --no-fuse=sibling_conv)" "$ff" "$fu"
grep -E '"(kernel_launches|kernel_launches_gpu|arena_bytes|weights_bytes)"' "$work/fused.json" |
  tr -d '\n ' | sed 's/^/fused: /'; echo
grep -E '"(kernel_launches|kernel_launches_gpu|arena_bytes|weights_bytes)"' "$work/unfused.json" |
  tr -d '\n ' | sed 's/^/unfused: /'; echo
args=()
for f in "$dir"/inputs/*.npy; do n=$(basename "$f" .npy); args+=(--input "$n=$f"); done
for run in fused:cpu fused:gpu unfused:cpu; do
  exe=${run%%:*}; cls=${run##*:}
  ONNX2CL_KERNELS=$cls "$work/$exe" "${args[@]}" --output-dir "$work/out_${exe}_$cls"
  for f in "$dir"/ref/*.npy; do
    "$compare" "$work/out_${exe}_$cls/$(basename "$f")" "$f" 1e-4 1e-3 || status=1
  done
done
exit $status

#!/bin/bash
# check.sh ONNX2CL COMPARE GRAPH_DIR WORK_DIR LAUNCH_CPU LAUNCH_GPU COPIES VIEWS [MAX_ALLOC]
# Offset views (codegen/codegen.c banner) on one graph of make_graphs.py:
#  1. compiles GRAPH_DIR/model.onnx with --stats / --stats-json: the build must have LAUNCH_CPU /
#     LAUNCH_GPU kernel launches per inference (cpu / gpu class), COPIES copy launches
#     (copy_contig / copy_strided, counted in the generated C) and VIEWS offset views;
#  2. runs it with the cpu and the gpu kernel class ($ONNX2CL_KERNELS) and, with MAX_ALLOC,
#     once more under ONNX2CL_MAX_ALLOC=MAX_ALLOC, which must split the arena into several
#     allocations (runtime/memplan.c: views stay with their parents); every output must match the onnxruntime
#     reference GRAPH_DIR/ref within |d| <= 1e-4 + 1e-3 |ref|.
set -euo pipefail
onnx2cl=$1; compare=$2; dir=$3; work=$4; lc=$5; lg=$6; copies=$7; views=$8; alloc=${9:-}
rm -rf "$work"; mkdir -p "$work"
"$onnx2cl" "$dir/model.onnx" -o "$work/model" --stats --stats-json "$work/stats.json" 2> "$work/stats.txt"
field() { sed -nE "s/.*\"$2\": *([0-9]+).*/\1/p" "$1" | head -1; }
status=0
expect() { # expect WHAT GOT WANT
  if [ "$2" != "$3" ]; then echo "FAIL: $1 is '$2', expected $3"; status=1; else echo "ok: $1 = $2"; fi
}
expect "launches (cpu)" "$(field "$work/stats.json" kernel_launches)" "$lc"
expect "launches (gpu)" "$(field "$work/stats.json" kernel_launches_gpu)" "$lg"
expect "copy launches" "$(grep -cE '/\* launch [0-9]+: copy_(contig|strided)_' "$work/model.c" || true)" "$copies"
expect "offset views" "$(sed -nE 's/^offset views: ([0-9]+).*/\1/p' "$work/stats.txt")" "$views"
grep -E '^arena:' "$work/stats.txt"
args=()
for f in "$dir"/inputs/*.npy; do n=$(basename "$f" .npy); args+=(--input "$n=$f"); done
runs="cpu gpu"; [ -n "$alloc" ] && runs="$runs split"
for run in $runs; do
  out="$work/out_$run"
  if [ $run = split ]; then
    ONNX2CL_MAX_ALLOC=$alloc "$work/model" "${args[@]}" --output-dir "$out" --verbose 2> "$work/split.txt"
    grep "device memory" "$work/split.txt"
    grep -Eq "arena [0-9]+ bytes in ([2-9]|[1-9][0-9]+) allocation" "$work/split.txt" ||
      { echo "FAIL: ONNX2CL_MAX_ALLOC=$alloc did not split the arena"; status=1; }
  else
    ONNX2CL_KERNELS=$run "$work/model" "${args[@]}" --output-dir "$out"
  fi
  for f in "$dir"/ref/*.npy; do
    "$compare" "$out/$(basename "$f")" "$f" 1e-4 1e-3 || status=1
  done
done
exit $status

#!/bin/bash
# free.sh ONNX2CL COMPARE WORK GRAPH NAMEMAP CKPT REFDIR SHAPE_FLAGS
# A weight-free graph (models/arch) compiled with --weights-from CKPT --name-map NAMEMAP runs on
# REFDIR/inputs/*.npy and matches REFDIR/<output>.npy (PyTorch) within 1e-4 + 1e-3 |ref|.
set -uo pipefail
o2c=$1; cmp=$2; work=$3; graph=$4; nm=$5; ckpt=$6; ref=$7; shapes=$8
rm -rf "$work"; mkdir -p "$work/out"
ins=()
for f in "$ref/inputs/"*.npy; do ins+=(--input "$(basename "$f" .npy)=$f"); done
"$o2c" "$graph" -o "$work/m" $shapes --weights-from "$ckpt" --name-map "$nm" || exit 1
"$work/m" "${ins[@]}" --output-dir "$work/out" > /dev/null || exit 1
st=0
for f in "$ref/"*.npy; do "$cmp" "$work/out/$(basename "$f")" "$f" 1e-4 1e-3 || st=1; done
exit $st

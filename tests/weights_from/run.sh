#!/bin/bash
# run.sh ONNX2CL COMPARE DIR WORK NAME REF
# `onnx2cl DIR/model.onnx --weights-from DIR/NAME.safetensors` compiles, runs on DIR/x.npy and
# matches DIR/REF/{y,e}.npy (numpy on the file's values) within 1e-6 abs + 1e-6 rel; the same
# model without --weights-from must NOT match (the file's values really replaced the ONNX ones).
set -uo pipefail
o2c=$1; cmp=$2; dir=$3; work=$4; name=$5; ref=$6
rm -rf "$work"; mkdir -p "$work/out" "$work/plain"
"$o2c" "$dir/model.onnx" -o "$work/m" --weights-from "$dir/$name.safetensors" || exit 1
"$work/m" --input "x=$dir/x.npy" --output-dir "$work/out" || exit 1
st=0
for o in y e; do "$cmp" "$work/out/$o.npy" "$dir/$ref/$o.npy" 1e-6 1e-6 || st=1; done
"$o2c" "$dir/model.onnx" -o "$work/plain/m" || exit 1
"$work/plain/m" --input "x=$dir/x.npy" --output-dir "$work/plain" || exit 1
if "$cmp" "$work/plain/y.npy" "$dir/$ref/y.npy" 1e-6 1e-6 > /dev/null; then
  echo "FAIL: the model's own weights also match $ref: the test cannot tell"; st=1
fi
exit $st

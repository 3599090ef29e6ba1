#!/bin/bash
# spelled.sh ONNX2CL COMPARE DIR WORK
# The weights layout hash ignores how a file spells a node's attributes (codegen/codegen.c
# reader_signature: sorted by name, ONNX defaults left out). DIR = tests/weights_from/spelled
# (make_spelled.py): a.onnx and b.onnx are the same model, b spelled as the dynamo exporter does
# (attribute order, every default written) with other weight values. b's --weights-only file
# loads into a's executable and gives b's outputs (onnxruntime, ref_b); a's own file gives
# a's (ref_a). c.onnx dilates W1's conv: its file is refused (exit 1, nothing written) naming
# the tensor W1 and both attribute sets.
set -uo pipefail
o2c=$1; cmp=$2; dir=$3; work=$4
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$work"; mkdir -p "$work/own" "$work/b" "$work/refused"
in=(--input "x=$dir/inputs/x.npy" --input "ids=$dir/inputs/ids.npy")
"$o2c" "$dir/a.onnx" -o "$work/a" || exit 1
for k in a b c; do "$o2c" "$dir/$k.onnx" --weights-only -o "$work/$k.weights" 2> /dev/null || exit 1; done
cmp -s "$work/a.weights" "$work/b.weights" && bad "a's and b's weights files are identical (other values expected)"
"$work/a" "${in[@]}" --output-dir "$work/own" || bad "a's own weights refused"
"$work/a" "${in[@]}" --weights "$work/b.weights" --output-dir "$work/b" || bad "b's weights refused by a's executable"
for o in y e; do
  "$cmp" "$work/own/$o.npy" "$dir/ref_a/$o.npy" 1e-5 1e-5 || bad "$o with a's weights"
  "$cmp" "$work/b/$o.npy" "$dir/ref_b/$o.npy" 1e-5 1e-5 || bad "$o with b's weights"
done
"$work/a" "${in[@]}" --weights "$work/c.weights" --output-dir "$work/refused" 2> "$work/c.err"
rc=$?
want="they first differ at stored tensor 1: 'W1.fconv_v8' \(node '#1'\) is float32 \[1152\] fconv_v8, read by o2c.Conv\[\?\]\{activation=2 output_divisor=1 pads=\[1,1,1,1\]\} at payload offset 512 here, the file has 'W1.fconv_v8' \(node '#1'\), float32 \[1152\] fconv_v8, read by o2c.Conv\[\?\]\{activation=2 dilations=\[2,2\] output_divisor=1 pads=\[2,2,2,2\]\}"
if [ $rc -ne 1 ] || ! grep -Eq "$want" "$work/c.err" || [ -n "$(ls -A "$work/refused")" ]; then
  bad "c.weights: exit $rc, $(cat "$work/c.err")"
else
  echo "refused as expected: $(cat "$work/c.err")"
fi
[ $fail -eq 0 ] && echo ok
exit $fail

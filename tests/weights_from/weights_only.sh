#!/bin/bash
# weights_only.sh ONNX2CL COMPARE DIR WORK
# `onnx2cl --weights-only`: a weights file written for an existing build from other values (here
# DIR/good_f32.safetensors, standing for a fine-tune of the same architecture) loads into that
# build's executable and gives the outputs of those values (DIR/ref_f32, numpy); the build's own
# weights still give its own outputs. Refused, exit 1, outputs untouched: weights of another model
# (tests/bad_input/symbolic.onnx) and of the same model built with other flags (--no-fuse=all,
# other kernels) and float16 weights (--weights-dtype f16) for this float32-weights build, with
# a message naming both dtypes; usage errors (exit 2): -o not *.weights, with --info.
set -uo pipefail
o2c=$1; cmp=$2; dir=$3; work=$4
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$work"; mkdir -p "$work/out" "$work/own" "$work/refused"
"$o2c" "$dir/model.onnx" -o "$work/m" || exit 1
"$o2c" "$dir/model.onnx" --weights-from "$dir/good_f32.safetensors" --weights-only -o "$work/ft.weights" || exit 1
[ "$(ls "$work" | LC_ALL=C sort | tr '\n' ' ')" = "ft.weights m m.c m.h m.weights out own refused " ] ||
  bad "--weights-only wrote other files: $(ls "$work")"
"$work/m" --input "x=$dir/x.npy" --weights "$work/ft.weights" --output-dir "$work/out" || bad "fine-tune weights refused"
for o in y e; do "$cmp" "$work/out/$o.npy" "$dir/ref_f32/$o.npy" 1e-6 1e-6 || bad "$o with the fine-tune's weights"; done
"$work/m" --input "x=$dir/x.npy" --output-dir "$work/own" || bad "own weights refused"
"$cmp" "$work/own/y.npy" "$dir/ref_f32/y.npy" 1e-6 1e-6 > /dev/null && bad "own weights gave the fine-tune's outputs"
# the model's own values through --weights-only: byte-identical to the build's weights file
"$o2c" "$dir/model.onnx" --weights-only -o "$work/same.weights" 2> /dev/null || exit 1
cmp "$work/same.weights" "$work/m.weights" || bad "--weights-only of the same model differs from the build's weights"
# another model; the same model with other flags
"$o2c" "$dir/../bad_input/symbolic.onnx" --shape x=2,3 --weights-only -o "$work/other.weights" || exit 1
"$o2c" "$dir/model.onnx" --no-fuse=all --weights-only -o "$work/nofuse.weights" || exit 1
for w in other nofuse; do
  "$work/m" --input "x=$dir/x.npy" --weights "$work/$w.weights" --output-dir "$work/refused" 2> "$work/$w.err"
  rc=$?
  want="does not fit model 'm': its weights layout hash is [0-9a-f]{16}, the model's [0-9a-f]{16}"
  where="they first differ at stored tensor 0: 'e' \(node '\(a graph output\)'\) is float32 \[3,4\] tensor, read by no launch at payload offset 0 here, the file has 'b' \(node 'relu0'\)"
  [ $w = nofuse ] && where="they first differ at stored tensor 1: 'o2c.panels16:0:W' \(node 'add'\) is float32 \[1,6,16\] panels, read by o2c.Gemm\[\?\]\{activation=0\} at payload offset 512 here, the file has 'W' \(node 'mm'\), float32 \[6,5\] tensor, read by MatMul\[1\]"
  if [ $rc -ne 1 ] || ! grep -Eq "$want .*; $where" "$work/$w.err" ||
     [ -n "$(ls -A "$work/refused")" ]; then
    bad "$w.weights: exit $rc, $(cat "$work/$w.err")"
  else
    echo "refused as expected: $(cat "$work/$w.err")"
  fi
done
# float16 weights for this float32-weights build: refused by dtype, before the build hash
"$o2c" "$dir/model.onnx" --weights-dtype f16 --weights-only -o "$work/f16.weights" || exit 1
"$work/m" --input "x=$dir/x.npy" --weights "$work/f16.weights" --output-dir "$work/refused" 2> "$work/f16.err"
rc=$?
want="weights file .*f16.weights stores its weights as float16 \(written with onnx2cl --weights-dtype f16\), model 'm' was compiled for float32 weights \(--weights-dtype f32\)"
if [ $rc -ne 1 ] || ! grep -Eq "$want" "$work/f16.err" || [ -n "$(ls -A "$work/refused")" ]; then
  bad "f16.weights: exit $rc, $(cat "$work/f16.err")"
else
  echo "refused as expected: $(cat "$work/f16.err")"
fi
"$o2c" "$dir/model.onnx" --weights-only -o "$work/x.bin" 2> "$work/u1.err"
[ $? -eq 2 ] && grep -q "give -o OUT.weights" "$work/u1.err" || bad "-o x.bin: $(cat "$work/u1.err")"
"$o2c" "$dir/model.onnx" --weights-only --info -o "$work/y.weights" 2> "$work/u2.err"
[ $? -eq 2 ] && [ ! -e "$work/y.weights" ] || bad "--weights-only --info: $(cat "$work/u2.err")"
[ $fail -eq 0 ] && echo ok
exit $fail

#!/bin/bash
# f16_weights.sh ONNX2CL COMPARE F16_DIR F32_DIR WORK MAX_RATIO [onnx2cl flags...]
# float16 weight storage of a float16 model (onnx2cl --weights-dtype, default f16 for float16
# models): compiles F16_DIR/model.onnx by default and F32_DIR/model.onnx (the same network in
# float32) by default, and asserts
#   - the float16 model's build stores float16 weights (--stats-json weights_dtype "f16") and its
#     weights file is at most MAX_RATIO times the float32 model's (both files whole: header,
#     payload, trailer);
#   - the float32 model's build stores float32 weights and --weights-dtype f16 on it writes exactly
#     the float16 model's payload size (same network, same storage);
#   - with RUN=1 in the environment: float16 storage of float16 weights is lossless: the float16
#     model run with its default (f16) weights and with --weights-dtype f32 gives bit-identical
#     outputs (same float arithmetic on the same weight values).
set -euo pipefail
o2c=$1; cmp=$2; f16=$3; f32=$4; work=$5; ratio=$6; shift 6
rm -rf "$work"; mkdir -p "$work"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
json() { sed -n "s/^ *\"$1\": \"\{0,1\}\([0-9a-z]*\)\"\{0,1\},\{0,1\}$/\1/p" "$2"; }
"$o2c" "$f16/model.onnx" -o "$work/h.c" --stats-json "$work/h.json" "$@"
"$o2c" "$f32/model.onnx" -o "$work/f.c" --stats-json "$work/f.json" "$@"
"$o2c" "$f32/model.onnx" -o "$work/fh.c" --weights-dtype f16 --stats-json "$work/fh.json" "$@"
[ "$(json weights_dtype "$work/h.json")" = f16 ] || bad "float16 model: weights_dtype $(json weights_dtype "$work/h.json")"
[ "$(json weights_dtype "$work/f.json")" = f32 ] || bad "float32 model: weights_dtype $(json weights_dtype "$work/f.json")"
[ "$(json weights_bytes "$work/h.json")" = "$(json weights_bytes "$work/fh.json")" ] ||
  bad "payload $(json weights_bytes "$work/h.json") (float16 model) != $(json weights_bytes "$work/fh.json") (float32 model, --weights-dtype f16)"
sh=$(stat -c %s "$work/h.weights"); sf=$(stat -c %s "$work/f.weights")
echo "weights files: float16 model $sh bytes, float32 model $sf bytes, ratio $(awk "BEGIN{printf \"%.4f\", $sh/$sf}") (limit $ratio)"
awk "BEGIN{exit !($sh <= $ratio * $sf)}" || bad "weights file ratio $sh / $sf above $ratio"
if [ "${RUN:-0}" = 1 ]; then
  "$o2c" "$f16/model.onnx" -o "$work/hx" "$@"
  "$o2c" "$f16/model.onnx" -o "$work/fx" --weights-dtype f32 "$@"
  args=()
  for f in "$f16"/inputs/*.npy; do n=$(basename "$f" .npy); args+=(--input "$n=$f"); done
  "$work/hx" "${args[@]}" --output-dir "$work/out_h"
  "$work/fx" "${args[@]}" --output-dir "$work/out_f"
  for f in "$f16"/ref/*.npy; do
    n=$(basename "$f")
    cmp -s "$work/out_h/$n" "$work/out_f/$n" || bad "$n: f16 and f32 weight storage differ"
    "$cmp" "$work/out_h/$n" "$f" 2e-2 1e-2 || bad "$n vs reference"
  done
fi
[ $fail -eq 0 ] && echo ok
exit $fail

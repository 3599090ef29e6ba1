#!/bin/bash
# shapes.sh ONNX2CL COMPARE TINY SHAPES WORK MODEL "FLAGS_A" "FLAGS_B" WANT [a-only]
# One weights file serves every --shape build of a model: MODEL (models/tiny/MODEL) compiled for
# two --shape bindings A (its committed PyTorch reference's) and B (SHAPES/MODEL: inputs and an
# onnxruntime reference, make_refs.py) writes byte-identical weights files, and each executable
# run with the OTHER build's weights file matches its reference (|d| <= 1e-4 + 1e-3 |ref|).
# WANT says what makes the two builds differ in their weights handling, asserted so the test
# exercises it: "repack" (conv weights rearranged at load in one build, another set in the other)
# or "consts" (shape-dependent constants in the generated file, not in the weights file).
# a-only: build B is compiled (its weights file compared) but not run (CI time: a cold PoCL
# build of the tiny UNet's kernels at a new shape takes ~100 s on the shared 2-core machine).
set -uo pipefail
o2c=$1; cmp=$2; tiny=$3; shapes=$4; work=$5; model=$6; flags_a=$7; flags_b=$8; want=$9
a_only=${10:-}
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$work"; mkdir -p "$work/oa" "$work/ob"
# shellcheck disable=SC2086
"$o2c" "$tiny/$model/model.onnx" -o "$work/a" $flags_a || exit 1
# shellcheck disable=SC2086
"$o2c" "$tiny/$model/model.onnx" -o "$work/b" $flags_b || exit 1
cmp "$work/a.weights" "$work/b.weights" || bad "the two --shape builds wrote different weights files"
repacks() { sed -n '/_repacks\[\] = {/,/^};/p' "$1" | grep -c 'O2R\|^    {[0-9]'; }
case $want in
  repack) ra=$(repacks "$work/a.c"); rb=$(repacks "$work/b.c")
          echo "conv weights rearranged at load: $ra (build A), $rb (build B)"
          [ "$ra" -gt 0 ] && [ "$ra" != "$rb" ] || bad "builds do not differ in load-time repacking" ;;
  consts) grep -q '_consts\[' "$work/a.c" && grep -q '_consts\[' "$work/b.c" &&
          ! cmp -s <(sed -n '/_consts\[/,/^};/p' "$work/a.c") <(sed -n '/_consts\[/,/^};/p' "$work/b.c") ||
          bad "builds do not differ in their shape-dependent constants" ;;
esac
inputs() { for f in "$1"/inputs/*.npy; do printf -- '--input %s=%s ' "$(basename "$f" .npy)" "$f"; done; }
# shellcheck disable=SC2046
"$work/a" $(inputs "$tiny/$model") --weights "$work/b.weights" --output-dir "$work/oa" || bad "build A refused B's weights"
for f in "$tiny/$model"/ref/*.npy; do "$cmp" "$work/oa/$(basename "$f")" "$f" 1e-4 1e-3 || bad "A: $(basename "$f")"; done
if [ "$a_only" != a-only ]; then
  # shellcheck disable=SC2046
  "$work/b" $(inputs "$shapes/$model") --weights "$work/a.weights" --output-dir "$work/ob" || bad "build B refused A's weights"
  for f in "$shapes/$model"/ref/*.npy; do "$cmp" "$work/ob/$(basename "$f")" "$f" 1e-4 1e-3 || bad "B: $(basename "$f")"; done
fi
[ $fail -eq 0 ] && echo ok
exit $fail

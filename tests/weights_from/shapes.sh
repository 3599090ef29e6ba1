#!/bin/bash
# shapes.sh ONNX2CL COMPARE TINY SHAPES WORK MODEL "FLAGS_A" "FLAGS_B" WANT [a-only]
# One weights file serves every --shape build of a model: MODEL (models/tiny/MODEL) compiled for
# two --shape bindings A (its committed PyTorch reference's) and B (SHAPES/MODEL: inputs and an
# onnxruntime reference, make_refs.py) writes byte-identical weights files, and each executable
# run with the OTHER build's weights file matches its reference (|d| <= 1e-4 + 1e-3 |ref|).
# WANT says what makes the two builds differ in their weights handling, asserted so the test
# exercises it: "repack" (conv weights rearranged at load in one build, another set in the other),
# "forms" (other conv kernel forms, among them the 16-channel kernels that read the stored
# 8-channel panels) or "consts" (shape-dependent constants in the generated file, not in the
# weights file). $O2C_ENV_A / $O2C_ENV_B: VAR=VALUE words for each build's onnx2cl.
# Build A runs twice: with the weights file mapped as the weights' memory (the default on PoCL)
# and with ONNX2CL_WEIGHTS_UPLOAD=copy; the mapped file must stay byte-identical.
# a-only: build B is compiled (its weights file compared) but not run (CI time: a cold PoCL
# build of the tiny UNet's kernels at a new shape takes ~100 s on the shared 2-core machine).
set -uo pipefail
o2c=$1; cmp=$2; tiny=$3; shapes=$4; work=$5; model=$6; flags_a=$7; flags_b=$8; want=$9
a_only=${10:-}
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$work"; mkdir -p "$work/oa" "$work/ob"
# shellcheck disable=SC2086
env ${O2C_ENV_A:-} "$o2c" "$tiny/$model/model.onnx" -o "$work/a" $flags_a || exit 1
# shellcheck disable=SC2086
env ${O2C_ENV_B:-} "$o2c" "$tiny/$model/model.onnx" -o "$work/b" $flags_b || exit 1
cmp "$work/a.weights" "$work/b.weights" || bad "the two --shape builds wrote different weights files"
# entries of the generated repack table (each names its tensor in a comment; an empty table is {0})
repacks() { sed -n '/_repacks\[\] = {/,/^};/p' "$1" | grep -c '^    {[0-9].*\*/'; }
case $want in
  repack) ra=$(repacks "$work/a.c"); rb=$(repacks "$work/b.c")
          echo "conv weights rearranged at load: $ra (build A), $rb (build B)"
          [ "$ra" -gt 0 ] && [ "$ra" != "$rb" ] || bad "builds do not differ in load-time repacking" ;;
  # the kernels the launches run (the program source defines every form a conv can take at any size)
  forms)  ka=$(grep -o '{"fconv_v_k[0-9a-z_]*' "$work/a.c" | sort -u | tr '\n' ' ')
          kb=$(grep -o '{"fconv_v_k[0-9a-z_]*' "$work/b.c" | sort -u | tr '\n' ' ')
          echo "conv kernels: $ka(build A), $kb(build B)"
          [ "$ka" != "$kb" ] && grep -q '_o16_' <<< "$ka$kb" || bad "builds do not differ in their conv kernel forms" ;;
  consts) grep -q '_consts\[' "$work/a.c" && grep -q '_consts\[' "$work/b.c" &&
          ! cmp -s <(sed -n '/_consts\[/,/^};/p' "$work/a.c") <(sed -n '/_consts\[/,/^};/p' "$work/b.c") ||
          bad "builds do not differ in their shape-dependent constants" ;;
esac
inputs() { for f in "$1"/inputs/*.npy; do printf -- '--input %s=%s ' "$(basename "$f" .npy)" "$f"; done; }
# shellcheck disable=SC2046
"$work/a" $(inputs "$tiny/$model") --weights "$work/b.weights" --output-dir "$work/oa" --verbose 2> "$work/a.err" ||
  { cat "$work/a.err"; bad "build A refused B's weights"; }
grep -q 'the mapped weights file, not copied' "$work/a.err" || bad "A did not map its weights file (PoCL)"
for f in "$tiny/$model"/ref/*.npy; do "$cmp" "$work/oa/$(basename "$f")" "$f" 1e-4 1e-3 || bad "A: $(basename "$f")"; done
# on PoCL (a CPU device) that run used the mapped file as the weights' memory, its conv weights
# rearranged copy-on-write in the mapping: the file must be unchanged; the copying upload
# (ONNX2CL_WEIGHTS_UPLOAD=copy, what GPUs get) must give the same outputs
cmp "$work/a.weights" "$work/b.weights" || bad "running A changed the weights file it mapped"
mkdir -p "$work/oc"
# shellcheck disable=SC2046
ONNX2CL_WEIGHTS_UPLOAD=copy "$work/a" $(inputs "$tiny/$model") --weights "$work/b.weights" --output-dir "$work/oc" ||
  bad "build A (copying upload) refused B's weights"
for f in "$tiny/$model"/ref/*.npy; do "$cmp" "$work/oc/$(basename "$f")" "$f" 1e-4 1e-3 || bad "A, copied: $(basename "$f")"; done
if [ "$a_only" != a-only ]; then
  # shellcheck disable=SC2046
  "$work/b" $(inputs "$shapes/$model") --weights "$work/a.weights" --output-dir "$work/ob" || bad "build B refused A's weights"
  for f in "$shapes/$model"/ref/*.npy; do "$cmp" "$work/ob/$(basename "$f")" "$f" 1e-4 1e-3 || bad "B: $(basename "$f")"; done
fi
[ $fail -eq 0 ] && echo ok
exit $fail

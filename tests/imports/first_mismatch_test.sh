#!/bin/bash
# first_mismatch_test.sh ONNX2CL CASE_DIR WORK_DIR — tests --expose and tools/first_mismatch.py.
#  1. --expose steps fusions aside only for the named values: launches on cases/expose are 2
#     (both MatMul+Add(+Relu) fused into GEMMs), 3 with --expose=a1 (the second GEMM writes a1, its
#     Sigmoid*Mul consumer runs separately) and 7 with --expose=all (nothing hidden).
#  2. the planted model (node 'add1''s bias altered by +0.05) vs onnxruntime on the original:
#     exit 1 and the first mismatch named is node 'add1' (Add, #4), max abs err 0.05.
#  3. the original model vs itself: exit 0, every value within tolerance.
# Needs python3 with numpy, onnx and onnxruntime; exits 77 (ctest: skipped, shown as such) when
# they are missing.
set -uo pipefail
o2c=$1; dir=$2; work=$3
tool=$(dirname "$0")/../../tools/first_mismatch.py
python3 -c "import numpy, onnx, onnxruntime" 2>/dev/null || { echo "numpy/onnx/onnxruntime missing: skipped"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
fail=0
for spec in ":2" "--expose=a1:3" "--expose=all:7"; do
  flag=${spec%:*}; want=${spec##*:}
  got=$("$o2c" "$dir/model.onnx" -o "$work/e.c" $flag --stats 2>&1 | sed -n 's/^kernel launches per inference: \([0-9]*\) .*/\1/p')
  echo "launches with '${flag:-no --expose}': $got (expected $want)"
  [ "$got" = "$want" ] || fail=1
done
out=$(python3 "$tool" "$dir/planted.onnx" --reference "$dir/model.onnx" --input "x=$dir/inputs/x.npy" \
      --onnx2cl "$o2c" --work "$work/planted" 2>&1); st=$?
echo "planted: exit $st: $out"
[ $st -eq 1 ] && grep -q "^first mismatch: node 'add1' (Add, #4) output 'a1': max abs err 0.05," <<<"$out" || fail=1
out=$(python3 "$tool" "$dir/model.onnx" --input "x=$dir/inputs/x.npy" --onnx2cl "$o2c" --work "$work/clean" 2>&1); st=$?
echo "clean: exit $st: $out"
[ $st -eq 0 ] && grep -q "^no mismatch: 7 values" <<<"$out" || fail=1
[ $fail -eq 0 ] && echo ok || echo FAIL
exit $fail

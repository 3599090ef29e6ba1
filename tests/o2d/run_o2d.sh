#!/bin/bash
# run_o2d.sh ONNX2CL ONNX2CL_RUN COMPARE TEST_O2D CC RUNTIME_INCLUDE MODEL_DIR WORK ATOL RTOL [flags...]
# The descriptor file path (onnx2cl -o OUT.o2d, onnx2cl-run) against the generated C path on one
# model of models/tiny:
#   1. the .o2d is deterministic (two compilations, same bytes) and its weights file equals the C
#      build's;
#   2. the .o2d holds exactly the generated C's descriptor: the C output compiled --no-main into a
#      shared object, its <name>_desc() serializes to the .o2d's bytes (test_o2d roundtrip);
#   3. for both kernel classes (--kernels cpu, gpu): onnx2cl-run's outputs equal the generated
#      executable's bit for bit, and the PyTorch reference (MODEL_DIR/ref) within ATOL + RTOL*|ref|.
set -euo pipefail
onnx2cl=$1 run=$2 compare=$3 t=$4 cc=$5 rtinc=$6 dir=$7 work=$8 atol=$9 rtol=${10}
shift 10
rm -rf "$work"; mkdir -p "$work/c" "$work/d" "$work/d2" "$work/so"
"$onnx2cl" "$dir/model.onnx" -o "$work/c/model" "$@"
"$onnx2cl" "$dir/model.onnx" -o "$work/d/model.o2d" "$@"
"$onnx2cl" "$dir/model.onnx" -o "$work/d2/model.o2d" "$@"
cmp "$work/d/model.o2d" "$work/d2/model.o2d"
cmp "$work/c/model.weights" "$work/d/model.weights"
test ! -e "$work/d/model.h" && test ! -e "$work/d/model.c"
echo "deterministic: $(stat -c %s "$work/d/model.o2d") bytes; weights file = the C build's"
"$onnx2cl" "$dir/model.onnx" -o "$work/so/model.c" --no-main "$@"
"$cc" -O0 -shared -fPIC -I"$rtinc" "$work/so/model.c" -o "$work/so/model.so"
"$t" roundtrip "$work/d/model.o2d" "$work/so/model.so" model
args=()
for f in "$dir"/inputs/*.npy; do n=$(basename "$f" .npy); args+=(--input "$n=$f"); done
status=0
for cls in cpu gpu; do
  "$work/c/model" "${args[@]}" --kernels $cls --output-dir "$work/out_c_$cls"
  "$run" "$work/d/model.o2d" "${args[@]}" --kernels $cls --output-dir "$work/out_d_$cls" --verbose
  for f in "$dir"/ref/*.npy; do
    n=$(basename "$f")
    if cmp "$work/out_c_$cls/$n" "$work/out_d_$cls/$n"; then
      echo "$cls: $n bit-identical to the generated executable's"
    else
      echo "FAIL $cls: $n differs from the generated executable's"; status=1
    fi
    "$compare" "$work/out_d_$cls/$n" "$f" "$atol" "$rtol" || status=1
  done
done
exit $status

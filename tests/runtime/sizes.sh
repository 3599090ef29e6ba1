#!/bin/bash
# sizes.sh ONNX2CL ONNX2CL_RUN COMPARE SRC WORK — several image sizes of one model share one OpenCL
# program and most of its compiled kernels (issue 24 items 1 and 3; test runtime.sizes, PoCL):
# the tiny UNet (models/tiny/unet) compiled for 16x16 and 40x40 latents; the second build takes
# the first one's weights file (--reuse-weights: no weights file written), and
#  1. run one after the other with one empty PoCL cache, PoCL holds ONE program (it keys programs
#     on their source: the two builds' OpenCL sources are identical), and the second size compiles
#     fewer new kernel specializations than half of the first size's;
#  2. each size's output equals the same size built the ordinary way (its own weights file),
#     bit for bit, and the PyTorch reference at 16x16 within 1e-4;
#  3. --reuse-weights refuses a weights file of another layout (f16 vs f32 storage) or a file that
#     is no weights file, naming it, exit 2, writing nothing.
set -u
onnx2cl=$1 run=$2 compare=$3 src=$4 work=$5
m=$src/models/tiny/unet
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
python3 - "$work" <<'PY' || exit 1
import sys, numpy as np
for s in (16, 40):
    np.save(f"{sys.argv[1]}/sample{s}.npy", np.random.RandomState(s).randn(1, 4, s, s).astype("float32"))
PY
cp "$m/inputs/sample.npy" "$work/sample16.npy"
sh_args() { echo "--shape sample=1,4,$1,$1 --shape encoder_hidden_states=1,77,32 --shape timestep=1"; }
# shellcheck disable=SC2046
"$onnx2cl" "$m/model.onnx" $(sh_args 16) --weights-dtype f32 -o "$work/u16.o2d" 2> "$work/c16.log" || bad "compile 16: $(tail -2 "$work/c16.log")"
for s in 40; do
  # shellcheck disable=SC2046
  "$onnx2cl" "$m/model.onnx" $(sh_args $s) --weights-dtype f32 -o "$work/u$s.o2d" --reuse-weights "$work/u16.weights" \
    2> "$work/c$s.log" || bad "compile $s --reuse-weights: $(tail -2 "$work/c$s.log")"
  [ ! -e "$work/u$s.weights" ] || bad "--reuse-weights wrote u$s.weights"
  cp "$work/u16.weights" "$work/u$s.weights"
  # shellcheck disable=SC2046
  "$onnx2cl" "$m/model.onnx" $(sh_args $s) --weights-dtype f32 -o "$work/own$s.o2d" 2> "$work/o$s.log" || bad "compile own $s"
done
export POCL_CACHE_DIR=$work/pocl ONNX2CL_CACHE_DIR=$work/o2c
prev=0
for s in 16 40; do
  "$run" "$work/u$s.o2d" --input "sample=$work/sample$s.npy" --input "timestep=$m/inputs/timestep.npy" \
    --input "encoder_hidden_states=$m/inputs/encoder_hidden_states.npy" --output "out_sample=$work/out$s.npy" \
    > "$work/r$s.log" 2>&1 || bad "run $s: $(tail -2 "$work/r$s.log")"
  n=$(find "$work/pocl" -name '*.so' | wc -l)
  progs=$(find "$work/pocl" -mindepth 2 -maxdepth 2 -type d | wc -l)
  echo "size ${s}x$s: PoCL programs $progs, kernel specializations $n (+$((n - prev)))"
  [ "$s" = 16 ] && first=$n
  [ "$s" != 16 ] && [ $((n - prev)) -ge $((first / 2)) ] && bad "size $s compiled $((n - prev)) new kernels (first size: $first)"
  prev=$n
  [ "$progs" = 1 ] || bad "size $s: PoCL holds $progs programs"
done
for s in 40; do
  "$run" "$work/own$s.o2d" --input "sample=$work/sample$s.npy" --input "timestep=$m/inputs/timestep.npy" \
    --input "encoder_hidden_states=$m/inputs/encoder_hidden_states.npy" --output "out_sample=$work/own$s.npy" \
    > "$work/ro$s.log" 2>&1 || bad "run own $s"
  cmp -s "$work/out$s.npy" "$work/own$s.npy" || bad "size $s: --reuse-weights build differs from its own build"
done
"$compare" "$work/out16.npy" "$m/ref/out_sample.npy" 1e-4 1e-3 || bad "16x16 vs PyTorch"
# bad input: another layout (f32 storage), not a weights file
expect() { # expect NAME PATTERN ARGS...
  local name=$1 pat=$2; shift 2
  "$onnx2cl" "$@" > "$work/$name.err" 2>&1; local rc=$?
  [ $rc = 2 ] || { bad "$name: exit $rc"; return; }
  grep -q -- "$pat" "$work/$name.err" || bad "$name: $(head -c 300 "$work/$name.err")"
}
# shellcheck disable=SC2046
expect reuse_f16 "reuse-weights .*u16.weights: written by another build .*f32 storage.*this build: .*f16" \
  "$m/model.onnx" $(sh_args 24) --weights-dtype f16 -o "$work/bad1.o2d" --reuse-weights "$work/u16.weights"
# shellcheck disable=SC2046
expect reuse_notweights "reuse-weights .*sample16.npy: not an onnx2cl weights file" \
  "$m/model.onnx" $(sh_args 24) -o "$work/bad2.o2d" --reuse-weights "$work/sample16.npy"
# shellcheck disable=SC2046
expect reuse_info "reuse-weights FILE: with -o OUT.o2d" "$m/model.onnx" $(sh_args 24) --info --reuse-weights "$work/u16.weights"
[ ! -e "$work/bad1.o2d" ] && [ ! -e "$work/bad2.o2d" ] && [ ! -e "$work/bad1.weights" ] || bad "a refused build wrote a file"
[ $fail = 0 ] && echo "PASS"
exit $fail

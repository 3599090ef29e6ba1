#!/bin/bash
# run.sh ONNX2CL COMPARE ROOT WORK MODEL EXPORTER COMPONENT SHAPE_FLAGS
# Name maps (docs/engine.md) on a committed tiny SD 1.5 export ROOT/models/tiny/MODEL[_dynamo]:
#  1. base: a canonical-key float32 checkpoint of the export's own weights (make_ckpt.py, by
#     inverting the committed model.namemap) compiled with --weights-from + --name-map gives
#     exactly (bit for bit) the outputs of the plain build;
#  2. weight-free (torchscript only): ROOT/models/arch/tiny_sd15/MODEL.onnx + that checkpoint +
#     its name map gives the same outputs, bit for bit;
#  3. fine-tune: tests/name_map/ft_COMPONENT.safetensors (diffusers/transformers save_pretrained,
#     float16, every parameter perturbed) gives the PyTorch outputs of the perturbed module
#     (ref_ft/MODEL) within 1e-4 + 1e-3 |ref|, and differs from the plain build;
#  4. recovery: --name-map-from the base checkpoint writes the committed name map again.
# Needs python3 with numpy and onnx (as tests/weights_from/finetune.py): fails without them.
set -uo pipefail
o2c=$1; cmp=$2; root=$3; work=$4; model=$5; exporter=$6; comp=$7; shapes=$8
dir=$root/models/tiny/$model; [ "$exporter" = dynamo ] && dir=${dir}_dynamo
here=$root/tests/name_map
rm -rf "$work"; mkdir -p "$work"
ins=()
for f in "$root/models/tiny/$model/inputs/"*.npy; do n=$(basename "$f" .npy); ins+=(--input "$n=$f"); done
outs=$(ls "$root/models/tiny/$model/ref" | sed 's/\.npy$//')
st=0
build_run() { # build_run NAME ONNX ARGS...: compile to WORK/NAME/m, run into WORK/NAME/out
  local name=$1 onnx=$2; shift 2
  mkdir -p "$work/$name/out"
  "$o2c" "$onnx" -o "$work/$name/m" $shapes "$@" 2> "$work/$name/log" || { cat "$work/$name/log"; echo "FAIL: $name: onnx2cl"; exit 1; }
  "$work/$name/m" "${ins[@]}" --output-dir "$work/$name/out" > /dev/null || { echo "FAIL: $name: run"; exit 1; }
}
python3 "$here/make_ckpt.py" "$dir/model.onnx" "$dir/model.namemap" \
  "$root/models/arch/tiny_sd15/arch.json" "$work/base.safetensors" || { echo "FAIL: make_ckpt.py"; exit 1; }
build_run plain "$dir/model.onnx"
build_run base "$dir/model.onnx" --weights-from "$work/base.safetensors" --name-map "$dir/model.namemap"
for o in $outs; do "$cmp" "$work/base/out/$o.npy" "$work/plain/out/$o.npy" 0 0 || st=1; done
if [ "$exporter" = torchscript ]; then
  a=$root/models/arch/tiny_sd15
  build_run free "$a/$model.onnx" --weights-from "$work/base.safetensors" --name-map "$a/$model.namemap"
  for o in $outs; do "$cmp" "$work/free/out/$o.npy" "$work/plain/out/$o.npy" 0 0 || st=1; done
fi
build_run ft "$dir/model.onnx" --weights-from "$here/ft_$comp.safetensors" --name-map "$dir/model.namemap"
cat "$work/ft/log"
for o in $outs; do
  "$cmp" "$work/ft/out/$o.npy" "$here/ref_ft/$model/$o.npy" 1e-4 1e-3 || st=1
  if "$cmp" "$work/plain/out/$o.npy" "$here/ref_ft/$model/$o.npy" 1e-4 1e-3 > /dev/null; then
    echo "FAIL: the plain build also matches ref_ft/$model/$o: the test cannot tell"; st=1
  fi
done
"$o2c" "$dir/model.onnx" --name-map-from "$work/base.safetensors" --component "$comp" \
  --name-map-out "$work/recovered.namemap" || { echo "FAIL: --name-map-from"; exit 1; }
if ! diff <(grep -v '^#' "$dir/model.namemap") <(grep -v '^#' "$work/recovered.namemap") > "$work/recovered.diff"; then
  echo "FAIL: the recovered name map differs from the committed one:"; head -20 "$work/recovered.diff"; st=1
fi
[ $st -eq 0 ] && echo "ok"
exit $st

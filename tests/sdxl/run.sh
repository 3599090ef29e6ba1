#!/bin/bash
# run.sh ONNX2CL ONNX2CL_RUN COMPARE ROOT WORK CKPT MODEL
# The weight-free tiny SDXL graph models/arch/tiny_sdxl/MODEL.onnx compiled to a descriptor with
# its weights from the checkpoint CKPT through the store (`--weights-from CKPT --component C
# --name-map MODEL.namemap -o MODEL.o2d`), run by onnx2cl-run on tests/sdxl/inputs, matches
# diffusers/transformers on the same checkpoint (tests/sdxl/ref/MODEL, make_refs.py) within
# 1e-4 + 1e-4 |ref| for every output. text_encoder_2 takes OpenCLIP's text_projection through
# the store's transposed view.
set -uo pipefail
o2c=$1; run=$2; cmp=$3; root=$4; work=$5; ckpt=$6; model=$7
a=$root/models/arch/tiny_sdxl; here=$root/tests/sdxl; in=$here/inputs
rm -rf "$work"; mkdir -p "$work/out"
case $model in
  unet) comp=unet
        shapes=(--shape sample=1,4,16,16 --shape encoder_hidden_states=1,77,80 --shape text_embeds=1,40
                --shape time_ids=1,6)
        ins=(sample timestep encoder_hidden_states text_embeds time_ids) ;;
  text_encoder|text_encoder_2) comp=$model; shapes=(--shape input_ids=1,77); ins=(input_ids) ;;
  *) echo "unknown model $model"; exit 2 ;;
esac
"$o2c" "$a/$model.onnx" "${shapes[@]}" --name-map "$a/$model.namemap" --weights-from "$ckpt" \
  --component "$comp" -o "$work/$model.o2d" || { echo "FAIL: compile"; exit 1; }
args=()
for i in "${ins[@]}"; do args+=(--input "$i=$in/$i.npy"); done
"$run" "$work/$model.o2d" "${args[@]}" --output-dir "$work/out" > /dev/null || { echo "FAIL: run"; exit 1; }
st=0; n=0
for r in "$here/ref/$model/"*.npy; do
  "$cmp" "$work/out/$(basename "$r")" "$r" 1e-4 1e-4 || st=1
  n=$((n + 1))
done
[ $n -gt 0 ] || { echo "FAIL: no references in $here/ref/$model"; exit 1; }
[ $st -eq 0 ] && echo "ok: $model, $n outputs"
exit $st

#!/bin/bash
# layouts.sh ONNX2CL COMPARE ROOT WORK
# onnx2cl --weights-from CKPT --name-map MAP with CKPT anything the checkpoint store reads: the
# weight-free tiny SD 1.5 UNet (models/arch/tiny_sd15) gets the same weights file, byte for byte,
# from the fine-tuned UNet as one diffusers component file (tests/name_map/ft_unet.safetensors),
# as a diffusers folder (WORK/dif/unet/ holding it), and as an LDM single file
# (tiny_sd15_unet_ldm.safetensors: the same values under model.diffusion_model.* keys, made by
# models/make_test_loras.py); the executable built from the LDM file matches PyTorch's output
# (tests/name_map/ref_ft/unet) within 1e-4 + 1e-3 |ref|.
set -uo pipefail
o2c=$1; cmp=$2; root=$3; work=$4
a=$root/models/arch/tiny_sd15; ft=$root/tests/name_map/ft_unet.safetensors
ldm=$root/tests/lora/tiny_sd15_unet_ldm.safetensors; ref=$root/tests/name_map/ref_ft/unet
shapes=(--shape sample=1,4,16,16 --shape encoder_hidden_states=1,77,32)
rm -rf "$work"; mkdir -p "$work/dif/unet" "$work/out"
ln -s "$ft" "$work/dif/unet/diffusion_pytorch_model.safetensors"
st=0
for c in "$ft" "$work/dif" "$ldm"; do
  n=$(basename "$c" .safetensors)
  "$o2c" "$a/unet.onnx" "${shapes[@]}" -o "$work/$n.weights" --weights-only --weights-from "$c" \
    --name-map "$a/unet.namemap" 2> "$work/$n.log" || { cat "$work/$n.log"; echo "FAIL: $c"; exit 1; }
done
for n in dif tiny_sd15_unet_ldm; do
  cmp -s "$work/ft_unet.weights" "$work/$n.weights" || { echo "FAIL: $n.weights differs from ft_unet.weights"; st=1; }
done
"$o2c" "$a/unet.onnx" "${shapes[@]}" -o "$work/m" --weights-from "$ldm" --component unet \
  --name-map "$a/unet.namemap" || { echo "FAIL: compile from the LDM file"; exit 1; }
ins=()
for f in "$root/models/tiny/unet/inputs/"*.npy; do ins+=(--input "$(basename "$f" .npy)=$f"); done
"$work/m" "${ins[@]}" --output-dir "$work/out" > /dev/null || { echo "FAIL: run"; exit 1; }
for f in "$ref/"*.npy; do "$cmp" "$work/out/$(basename "$f")" "$f" 1e-4 1e-3 || st=1; done
[ $st -eq 0 ] && echo ok
exit $st

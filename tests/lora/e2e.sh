#!/bin/bash
# e2e.sh ONNX2CL COMPARE ROOT WORK CKPT
# The weight-free tiny SD 1.5 UNet compiled with --weights-from CKPT (ft_unet's values, any
# layout) --lora tiny_peft.safetensors:0.8 (a diffusers/PEFT LoRA, models/make_test_loras.py)
# matches PyTorch's UNet after diffusers' load_lora_weights + fuse_lora(lora_scale=0.8)
# (tiny_peft_out_sample.npy) within 1e-4 + 1e-3 |ref|, and differs from the output without it.
set -uo pipefail
o2c=$1; cmp=$2; root=$3; work=$4; ckpt=$5
a=$root/models/arch/tiny_sd15; here=$root/tests/lora
rm -rf "$work"; mkdir -p "$work/out"
"$o2c" "$a/unet.onnx" --shape sample=1,4,16,16 --shape encoder_hidden_states=1,77,32 -o "$work/m" \
  --weights-from "$ckpt" --name-map "$a/unet.namemap" --lora "$here/tiny_peft.safetensors:0.8" \
  || { echo "FAIL: compile"; exit 1; }
ins=()
for f in "$root/models/tiny/unet/inputs/"*.npy; do ins+=(--input "$(basename "$f" .npy)=$f"); done
"$work/m" "${ins[@]}" --output-dir "$work/out" > /dev/null || { echo "FAIL: run"; exit 1; }
st=0
"$cmp" "$work/out/out_sample.npy" "$here/tiny_peft_out_sample.npy" 1e-4 1e-3 || st=1
if "$cmp" "$root/tests/name_map/ref_ft/unet/out_sample.npy" "$here/tiny_peft_out_sample.npy" 1e-4 1e-3 > /dev/null; then
  echo "FAIL: the output without the LoRA also matches: the test cannot tell"; st=1
fi
[ $st -eq 0 ] && echo ok
exit $st

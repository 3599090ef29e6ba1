#!/bin/bash
# prompt_tags.sh — A1111's LoRA prompt syntax in `onnx2cl-sd -m` (pipeline/sd_lora_tags.c): on the
# tiny SD 1.5 checkpoint of tests/pipeline/oneshot with tests/lora/tiny_peft.safetensors (UNet-only
# PEFT LoRA; its merge is proven against PyTorch by lora.e2e_*):
#  - `-p "a cat <lora:tiny_peft:0.8>" --lora-dir tests/lora` (fresh cache: converts) gives the same
#    image bit for bit as `-p "a cat" --lora tests/lora/tiny_peft.safetensors:0.8` (another fresh
#    cache: converts), and not the image without the LoRA;
#  - the weights cache key is the LoRA set: the --lora run in the tag run's cache converts nothing;
#  - <lora:NAME:TE:UNET> / te= unet=: the UNet weight is what moves this UNet-only LoRA
#    (<lora:tiny_peft:0.3:0.8> and <lora:tiny_peft:unet=0.8:te=0.2> = 0.8; <lora:tiny_peft:0.8:0.4>
#    differs), found in a subfolder of --lora-dir / $ONNX2CL_LORA_DIR;
#  - the same tag twice applies twice (0.4 + 0.4 ~ 0.8, float sums: within 1e-4 while no LoRA is not);
#  - the PNG's parameters keep the prompt as given, tag included.
# Usage: prompt_tags.sh ONNX2CL_SD O2C_COMPARE ROOT WORK
set -uo pipefail
sd=$1 cmpx=$2 root=$3 work=$4
ck=$root/tests/pipeline/oneshot/tiny_sd15.safetensors
lora=$root/tests/lora/tiny_peft.safetensors
rm -rf "$work"; mkdir -p "$work/loras/style/v1"
ln -s "$lora" "$work/loras/style/v1/tiny_peft.safetensors"
unset ONNX2CL_LORA_DIR
fails=0
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
run() { # run TAG CACHE PROMPT [FLAGS...]
  local tag=$1 cache=$2 prompt=$3; shift 3
  if ! ONNX2CL_CACHE_DIR=$work/$cache "$sd" -m "$ck" -p "$prompt" --width 32 --height 32 --steps 4 --seed 42 \
       --quiet -o "$work/$tag.png" --save-image "$work/$tag.npy" "$@" > "$work/$tag.log" 2>&1; then
    bad "$tag: exit non-zero: $(grep onnx2cl-sd: "$work/$tag.log" | tail -3)"
  fi
}
same() { cmp -s "$work/$1.npy" "$work/$2.npy" && echo "ok $1 = $2 (bit-identical)" || bad "$1 and $2 differ"; }
differ() { cmp -s "$work/$1.npy" "$work/$2.npy" && bad "$1 and $2 are the same image" || echo "ok $1 != $2"; }
converted() { grep -q "$2 converted" "$work/$1.log" || bad "$1: not '$2 converted': $(grep converted "$work/$1.log")"; }

run tag cA "a cat <lora:tiny_peft:0.8>" --lora-dir "$root/tests/lora"
converted tag "3 compiled, 3"
run flag cB "a cat" --lora "$lora:0.8"
converted flag "3 compiled, 3"
same tag flag
run none cB "a cat"
differ tag none
run flag_in_tag_cache cA "a cat" --lora "$lora:0.8"
converted flag_in_tag_cache "0 compiled, 0"
same flag_in_tag_cache tag
grep -aq "a cat <lora:tiny_peft:0.8>" "$work/tag.png" || bad "tag.png: the parameters lost the prompt as given"
# TE:UNET, named weights, a subfolder, $ONNX2CL_LORA_DIR
ONNX2CL_LORA_DIR=$work/loras run te_unet cA "a cat <lora:tiny_peft:0.3:0.8>"
same te_unet tag
run named cA "<lora:tiny_peft:unet=0.8:te=0.2>a cat" --lora-dir "$work/loras"
same named tag
run unet_04 cA "a cat <lora:tiny_peft:0.8:0.4>" --lora-dir "$work/loras"
differ unet_04 tag
# the same tag twice: merged twice
run twice cA "a cat <lora:tiny_peft:0.4><lora:tiny_peft:0.4>" --lora-dir "$work/loras"
if "$cmpx" "$work/twice.npy" "$work/tag.npy" 1e-4 0 > "$work/twice.cmp" 2>&1; then echo "ok twice ~ tag: $(head -c 120 "$work/twice.cmp")"
else bad "twice: $(cat "$work/twice.cmp")"; fi
"$cmpx" "$work/none.npy" "$work/tag.npy" 1e-4 0 > /dev/null 2>&1 && bad "none is within 1e-4 of tag: 'twice' proves nothing"
echo "prompt_tags: $fails failed"
[ "$fails" = 0 ]

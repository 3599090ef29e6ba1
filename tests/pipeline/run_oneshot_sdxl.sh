#!/bin/bash
# run_oneshot_sdxl.sh — the SDXL proof of `onnx2cl-sd -m CHECKPOINT` (issue 23 item 1): the tiny
# SDXL checkpoint models/ckpt/sdxl (architecture models/arch/tiny_sdxl: CLIP-L + OpenCLIP-G,
# text_time UNet), as the sgm single file and as the diffusers folder, against diffusers'
# StableDiffusionXLPipeline / Img2Img / Inpaint on the same weights (oneshot_sdxl/<case>.npy,
# models/make_oneshot_sdxl_refs.py): max |got - ref| <= 1e-3 on the float image in [0,1], for
# guidance with a negative prompt, with none (zero uncond embeddings), 1 step without guidance,
# DPM++ 2M Karras, a batch of 2 (Euler a), img2img (one image and a batch) and inpainting with the
# base UNet, and LoRAs (euler_4_lora_*: tests/lora/sdxl_kohya = kohya naming with sgm UNet paths,
# LoCon 3x3 convs, lora_te1_ + lora_te2_; sdxl_peft = diffusers/PEFT unet. + text_encoder. +
# text_encoder_2.; both at 0.8 with --weights-dtype f32 vs diffusers' load_lora_weights +
# fuse_lora(lora_scale=0.8), models/make_sdxl_loras.py; the prompt tag <lora:sdxl_peft:0.5:0.8>:
# both text encoders at 0.5, the UNet at 0.8). Prompts with "!" (tokenizer_2's pad token:
# split out as transformers does). The diffusers folder runs the first case and the first LoRA
# case only (same programs, its own weights file).
#
# cases.txt: NAME<TAB>flags; the token NONEG: no negative prompt; +TEXT: TEXT appended to the prompt.
# Usage: run_oneshot_sdxl.sh ONNX2CL_SD O2C_COMPARE SOURCE_DIR WORK_DIR
set -euo pipefail
sd=$1 compare=$2 root=$3 work=$4
os=$root/tests/pipeline/oneshot_sdxl
. "$(dirname "$0")/case_lib.sh"
case_setup "$os" "$work"
run_case() { # name ckpt flags...
  local name=$1 ck=$2
  shift 2
  local neg=(-n "$negative") args=() p=$prompt
  for f in "$@"; do
    case $f in NONEG) neg=() ;; +*) p+=" ${f#+}" ;; *) args+=("${f//\$ROOT/$root}") ;; esac
  done
  if ! "$sd" -m "$ck" --arch-dir "$root/models/arch" -p "$p" "${neg[@]}" --width 32 --height 32 \
       -o "$work/$name.png" --save-image "$work/$name.npy" "${args[@]}" 2> "$work/$name.log"; then
    bad "$name: onnx2cl-sd exited non-zero"; cat "$work/$name.log"; return
  fi
  local ref=${name%-folder}
  ref=${ref%-offload}
  if "$compare" "$work/$name.npy" "$os/$ref.npy" 1e-3 0 > "$work/$name.cmp" 2>&1; then
    printf '%-24s %s\n' "$name" "$(head -c 160 "$work/$name.cmp")"
  else
    bad "$name: $(cat "$work/$name.cmp")"
  fi
  grep -q "architecture tiny_sdxl" "$work/$name.log" || bad "$name: no 'architecture tiny_sdxl' in its log"
}
first= lora=
while IFS=$'\t' read -r name flags; do
  case $name in '#'*|'') continue ;; esac
  # shellcheck disable=SC2086
  run_case "$name" "$root/models/ckpt/sdxl/sdxl.safetensors" $flags
  [ -n "$first" ] || first="$name	$flags"
  case " $flags " in *" --lora "*) [ -n "$lora" ] || lora="$name	$flags" ;; esac
done < "$os/cases.txt"
for c in "$first" "$lora"; do
  [ -n "$c" ] || continue
  # shellcheck disable=SC2086
  run_case "${c%%	*}-folder" "$root/models/ckpt/sdxl/diffusers" ${c#*	}
done
# --offload (one stage's models on the device at a time): the same image, a lower device memory peak
offload_peak i2i_euler_06_4-offload "$work/i2i_euler_06_4.log" "$work/i2i_euler_06_4-offload.log"
# an empty negative prompt is not the same as none (zero embeddings): the two images differ
if "$compare" "$work/euler_4.npy" "$work/noneg_euler_4.npy" 1e-3 0 > /dev/null 2>&1; then
  bad "a negative prompt and none gave the same image"
fi
echo "oneshot_sdxl: $fails failed"
[ "$fails" = 0 ]

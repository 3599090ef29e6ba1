#!/bin/bash
# run_taesd.sh — onnx2cl-sd --taesd (issue 21 item 6) on the oneshot test's tiny SD 1.5 single file
# (tests/pipeline/oneshot: 32x32, 4 steps Euler, cfg 7.5, seed 42) with the tiny TAESD of
# models/ckpt/taesd (refs: models/make_taesd_refs.py):
#   1. --fast-decode (original taesd_decoder naming): the image equals diffusers'
#      StableDiffusionPipeline with pipe.vae = AutoencoderTiny(tiny) (euler_4_taesd.npy) within 1e-3
#      (f32 weights storage); the VAE decoder is not run; --preview-every 2 (divides the 4 steps):
#      the preview PNG's pixels equal the output PNG's;
#   2. the same from the diffusers AutoencoderTiny folder (the same weights: the same image), its
#      TAESD program reused from the cache (only its weights converted);
#   3. --preview-every 3 without --fast-decode: the preview (a valid PNG, written at step 3 only)
#      equals diffusers' TAESD decode of the latents after step 3 within 1e-3 (+ 8-bit rounding).
# Usage: run_taesd.sh ONNX2CL_SD O2C_COMPARE PYTHON3 WORK_DIR
set -euo pipefail
sd=$1 compare=$2 py=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
os=$root/tests/pipeline/oneshot
ck=$root/models/ckpt/taesd
export ONNX2CL_CACHE_DIR=$work/cache
rm -rf "$work"; mkdir -p "$work"
prompt=$(sed -n 's/^# prompt: //p' "$os/cases.txt")
negative=$(sed -n 's/^# negative: //p' "$os/cases.txt")
fails=0
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
run() { # run TAG FLAGS...
  local tag=$1; shift
  if ! (cd "$os" && "$sd" -m tiny_sd15.safetensors -p "$prompt" -n "$negative" --width 32 --height 32 \
        --steps 4 --cfg 7.5 --seed 42 --scheduler euler --weights-dtype f32 --quiet \
        -o "$work/$tag.png" --save-image "$work/$tag.npy" "$@") 2> "$work/$tag.log"; then
    bad "$tag: onnx2cl-sd exited non-zero"; cat "$work/$tag.log"; return 1
  fi
}
# 1. fast decode, original naming, previews every 2 steps
if run fast_orig --taesd "$ck/tiny_taesd_decoder.safetensors" --fast-decode --preview "$work/pv2.png" --preview-every 2; then
  "$compare" "$work/fast_orig.npy" "$here/euler_4_taesd.npy" 1e-3 0 || bad "fast_orig: differs from diffusers"
  grep -q "architecture tiny_taesd" "$work/fast_orig.log" || bad "fast_orig: no 'architecture tiny_taesd' line"
  grep -q "decoded the images (no VAE)" "$work/fast_orig.log" || bad "fast_orig: TAESD did not decode"
  awk '/vae decoder/ {exit !($4 == 0)}' "$work/fast_orig.log" || bad "fast_orig: the VAE decoder ran"
  "$py" "$here/png_vs.py" "$work/pv2.png" "$work/fast_orig.png" || bad "pv2: the last preview is not the output image"
fi
# 2. the diffusers folder (encoder + decoder keys): the same image; the program comes from the cache
if run fast_folder --taesd "$ck/tiny_taesd" --fast-decode; then
  cmp -s "$work/fast_folder.npy" "$work/fast_orig.npy" || bad "fast_folder: differs from the original-naming image"
  ! grep -q "compiling" "$work/fast_folder.log" || bad "fast_folder: compiled again: $(grep compiling "$work/fast_folder.log")"
fi
# 3. preview at step 3 of 4 (not 4): diffusers' decode of the latents after step 3; the VAE makes the image
if run preview3 --taesd "$ck/tiny_taesd" --preview "$work/pv3.png" --preview-every 3; then
  "$py" "$here/png_vs.py" "$work/pv3.png" "$here/euler_4_taesd_step3.npy" 1e-3 || bad "pv3: differs from diffusers' step-3 decode"
  "$compare" "$work/preview3.npy" "$os/euler_4-single.npy" 1e-3 0 > /dev/null || bad "preview3: the VAE image changed"
  ls "$work" | grep -q "\.tmp" && bad "temporary files left: $(ls "$work" | grep "\.tmp")"
fi
[ "$fails" -eq 0 ] && echo "ok: fast decode = diffusers + AutoencoderTiny; previews = TAESD decodes"
exit "$fails"

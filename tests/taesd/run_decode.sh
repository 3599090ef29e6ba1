#!/bin/bash
# run_decode.sh — TAESD's decoder through the store (issue 21 item 6): the weight-free graph
# models/arch/tiny_taesd/vae_decoder.onnx compiled with the weights of the tiny TAESD checkpoint in
# both layouts users download (models/ckpt/taesd: the diffusers AutoencoderTiny folder's
# diffusion_pytorch_model.safetensors, keys decoder.layers.*; taesd.py's original
# tiny_taesd_decoder.safetensors, keys "1.weight" ...), run on fixed latents [1,4,8,8], equal to
# diffusers' AutoencoderTiny.decode (tests/taesd/decode.npy, models/make_taesd_refs.py) within 1e-4.
# Usage: run_decode.sh ONNX2CL ONNX2CL_RUN O2C_COMPARE WORK_DIR
set -euo pipefail
onnx2cl=$1 run=$2 compare=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
arch=$root/models/arch/tiny_taesd
rm -rf "$work"; mkdir -p "$work"
fails=0
for ck in tiny_taesd/diffusion_pytorch_model.safetensors tiny_taesd_decoder.safetensors; do
  tag=$(basename "$(dirname "$ck")")-$(basename "$ck" .safetensors)
  "$onnx2cl" "$arch/vae_decoder.onnx" --name-map "$arch/vae_decoder.namemap" \
      --weights-from "$root/models/ckpt/taesd/$ck" --component vae --weights-dtype f32 \
      --shape latent_sample=1,4,8,8 -o "$work/$tag.o2d" 2> "$work/$tag.log" || {
    echo "FAIL $tag: onnx2cl exited non-zero"; cat "$work/$tag.log"; fails=$((fails + 1)); continue; }
  "$run" "$work/$tag.o2d" --input "latent_sample=$here/latents.npy" --output "sample=$work/$tag.npy" \
      >> "$work/$tag.log" 2>&1 || { echo "FAIL $tag: onnx2cl-run"; cat "$work/$tag.log"; fails=$((fails + 1)); continue; }
  if "$compare" "$work/$tag.npy" "$here/decode.npy" 1e-4 0; then :; else
    echo "FAIL $tag: differs from AutoencoderTiny.decode"; fails=$((fails + 1)); fi
done
[ "$fails" -eq 0 ] && echo "ok: both layouts equal AutoencoderTiny.decode within 1e-4"
exit "$fails"

#!/bin/bash
# run.sh — compiles the tiny SD 1.5 VAE (models/arch/tiny_sd15 with the weights of
# tests/pipeline/oneshot/tiny_sd15.safetensors; scale 2) to descriptor files at the full and the
# tile sizes and the pointwise models of make_pointwise.py (each skipped when up to date), then runs
# test_vae_tiling on them.
# Usage: run.sh ONNX2CL TEST_VAE_TILING SOURCE_DIR WORK_DIR
set -euo pipefail
onnx2cl=$1 test=$2 root=$3 work=$4
arch=$root/models/arch/tiny_sd15 ckpt=$root/tests/pipeline/oneshot/tiny_sd15.safetensors
mkdir -p "$work"
export ONNX2CL_CACHE_DIR=${ONNX2CL_CACHE_DIR:-$work/cache}
build() { # build NAME MODEL.onnx INPUT DIMS [onnx2cl flags]
  local out=$work/$1.o2d model=$2 shape="$3=$4"; shift 4
  if [ ! -f "$out" ] || [ "$model" -nt "$out" ] || [ "$ckpt" -nt "$out" ] || [ "$onnx2cl" -nt "$out" ] ||
     [ "$(cat "$work/$(basename "$out" .o2d).shape" 2>/dev/null)" != "$shape" ]; then
    "$onnx2cl" "$model" --shape "$shape" "$@" -o "$out" 2> "$work/$(basename "$out" .o2d).log" ||
      { cat "$work/$(basename "$out" .o2d).log"; exit 1; }
    echo "$shape" > "$work/$(basename "$out" .o2d).shape"
  fi
}
vae() { # vae NAME COMPONENT INPUT DIMS: the tiny SD 1.5 VAE part with the checkpoint's weights
  build "$1" "$arch/$2.onnx" "$3" "$4" --weights-from "$ckpt" --name-map "$arch/$2.namemap"
}
vae dec_full vae_decoder latent_sample 1,4,24,40
vae dec_tile vae_decoder latent_sample 1,4,16,16
vae enc_full vae_encoder sample 1,3,48,80
vae enc_tile vae_encoder sample 1,3,32,32
# spatially pointwise models (make_pointwise.py): float16 I/O with batch 2, and a 1/2 scale
build up_f16 "$root/tests/vae_tiling/up_f16.onnx" x 2,4,8,8
build down_f32 "$root/tests/vae_tiling/down_f32.onnx" x 1,3,8,8
exec "$test" "$work"

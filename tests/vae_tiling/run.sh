#!/bin/bash
# run.sh — compiles the tiny SD 1.5 VAE (models/arch/tiny_sd15 with the weights of
# tests/pipeline/oneshot/tiny_sd15.safetensors; scale 2) to descriptor files at the full and the
# tile sizes (skipped when up to date), then runs test_vae_tiling on them.
# Usage: run.sh ONNX2CL TEST_VAE_TILING SOURCE_DIR WORK_DIR
set -euo pipefail
onnx2cl=$1 test=$2 root=$3 work=$4
arch=$root/models/arch/tiny_sd15 ckpt=$root/tests/pipeline/oneshot/tiny_sd15.safetensors
mkdir -p "$work"
export ONNX2CL_CACHE_DIR=${ONNX2CL_CACHE_DIR:-$work/cache}
build() { # build NAME COMPONENT INPUT DIMS
  local out=$work/$1.o2d
  if [ ! -f "$out" ] || [ "$arch/$2.onnx" -nt "$out" ] || [ "$ckpt" -nt "$out" ] || [ "$onnx2cl" -nt "$out" ] ||
     [ "$(cat "$work/$1.shape" 2>/dev/null)" != "$3=$4" ]; then
    "$onnx2cl" "$arch/$2.onnx" --weights-from "$ckpt" --name-map "$arch/$2.namemap" --shape "$3=$4" \
        -o "$out" 2> "$work/$1.log" || { cat "$work/$1.log"; exit 1; }
    echo "$3=$4" > "$work/$1.shape"
  fi
}
build dec_full vae_decoder latent_sample 1,4,24,40
build dec_tile vae_decoder latent_sample 1,4,16,16
build enc_full vae_encoder sample 1,3,48,80
build enc_tile vae_encoder sample 1,3,32,32
exec "$test" "$work"

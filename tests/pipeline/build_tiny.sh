#!/bin/bash
# build_tiny.sh — compiles the tiny SD models of models/tiny for the onnx2cl-sd tests into WORK_DIR:
# text_encoder.so (input_ids 1x77), vae_decoder.so (latents 1x4x16x16 -> 1x3x32x32), b2/unet.so
# (batch 2: guidance in one run), b1/unet.so (batch 1: two runs) and fake/unet.so (the text
# encoder under the UNet's name, for bad_input.sh), each with its .weights, as a
# user does it (onnx2cl --no-main, then cc -shared -fPIC). Skips models that are up to date.
# Usage: build_tiny.sh ONNX2CL CC RUNTIME_INCLUDE WORK_DIR
set -euo pipefail
onnx2cl=$1 cc=$2 rtinc=$3 work=$4
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work/b2" "$work/b1" "$work/fake"
build() { # build NAME MODEL shape-flags...
  local name=$1 model=$2; shift 2
  if [ ! -f "$work/$name.so" ] || [ "$model" -nt "$work/$name.so" ] || [ "$onnx2cl" -nt "$work/$name.so" ]; then
    "$onnx2cl" "$model" -o "$work/$name.c" --no-main "$@"
    "$cc" -O1 -shared -fPIC -I"$rtinc" "$work/$name.c" -o "$work/$name.so"
  fi
}
t0=$(date +%s)
build text_encoder "$root/models/tiny/text_encoder/model.onnx" --shape input_ids=1,77
build vae_decoder "$root/models/tiny/vae_decoder/model.onnx" --shape latent_sample=1,4,16,16
build b2/unet "$root/models/tiny/unet/model.onnx" --shape sample=2,4,16,16 --shape encoder_hidden_states=2,77,32
build b1/unet "$root/models/tiny/unet/model.onnx" --shape sample=1,4,16,16 --shape encoder_hidden_states=1,77,32
# a wrong model under the UNet's name (bad-input test): the text encoder
build fake/unet "$root/models/tiny/text_encoder/model.onnx" --shape input_ids=1,77
echo "models compiled in $(( $(date +%s) - t0 )) s into $work"

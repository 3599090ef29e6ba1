#!/bin/bash
# run_session.sh ONNX2CL_SD TEST_SESSION WORK — the library test (test_session.c) on the tiny SD 1.5
# checkpoint: the CLI writes the reference PNG for (prompt, negative, euler, 4 steps, cfg 7.5, seed
# 42, 32x32) into a fresh cache, then test_session opens the same checkpoint on that cache (a cache
# hit: nothing compiled) and checks its image against the CLI's, byte for byte; the CLI's img2img of
# that image (strength 0.6, 10 steps) is the reference of the session's img2img.
set -euo pipefail
sd=$1 test=$2 work=$3
os=$(cd "$(dirname "$0")/../pipeline/oneshot" && pwd)
rm -rf "$work"; mkdir -p "$work"
export ONNX2CL_CACHE_DIR=$work/cache
prompt="a photo of an astronaut riding a horse on mars"
"$sd" -m "$os/tiny_sd15.safetensors" -p "$prompt" -n "blurry, low quality" --steps 4 --cfg 7.5 --seed 42 \
  --scheduler euler --width 32 --height 32 --quiet -o "$work/cli.png" 2> "$work/cli.log" || { cat "$work/cli.log"; exit 1; }
"$sd" -m "$os/tiny_sd15.safetensors" -p "$prompt" -n "blurry, low quality" --steps 10 --cfg 7.5 --seed 42 \
  --scheduler euler --init-image "$work/cli.png" --strength 0.6 --quiet -o "$work/cli_i2i.png" 2> "$work/cli_i2i.log" ||
  { cat "$work/cli_i2i.log"; exit 1; }
"$test" "$os/tiny_sd15.safetensors" "$ONNX2CL_CACHE_DIR" "$work/cli.png" "$prompt" "$work/cli_i2i.png"

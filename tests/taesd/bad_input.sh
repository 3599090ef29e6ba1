#!/bin/bash
# bad_input.sh — onnx2cl-sd --taesd refusals: exit status, message (naming the keys), no output
# written, nothing compiled (the TAESD file is checked before the checkpoint's models).
# Usage: bad_input.sh ONNX2CL_SD WORK_DIR
set -uo pipefail
sd=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ck=$root/tests/pipeline/oneshot/tiny_sd15.safetensors
export ONNX2CL_CACHE_DIR=$work/cache
rm -rf "$work"; mkdir -p "$work/out"
fails=0
expect() { # expect STATUS REGEX ARGS...
  local want=$1 re=$2; shift 2
  local err st
  err=$("$sd" -m "$ck" -p "a cat" -o "$work/out/x.png" "$@" 2>&1 >/dev/null); st=$?
  if [ "$st" -ne "$want" ]; then echo "FAIL $*: exit $st, expected $want: $err"; fails=$((fails + 1)); return; fi
  if ! grep -Eq -- "$re" <<<"$err"; then echo "FAIL $*: message /$re/ not in: $err"; fails=$((fails + 1)); return; fi
  if [ -n "$(ls -A "$work/out")" ]; then echo "FAIL $*: wrote $(ls -A "$work/out")"; fails=$((fails + 1)); fi
  echo "ok (exit $st): $err"
}
expect 1 "--taesd .*tiny_kohya.safetensors: a LoRA file \(kohya naming, e.g. 'lora_unet_.*'\), not TAESD" \
  --taesd "$root/tests/lora/tiny_kohya.safetensors" --fast-decode
expect 1 "--taesd .*tiny_sd15.safetensors: not a TAESD decoder \(403 tensors; closest architecture (tiny_)?taesd: [0-9]+ keys differ: 'decoder.layers.0.bias' \[(16|64)\] missing" \
  --taesd "$ck"
expect 1 "--taesd .*/models/ckpt/taesd: a folder without diffusion_pytorch_model.safetensors" \
  --taesd "$root/models/ckpt/taesd"
expect 2 "^onnx2cl-sd: --preview: needs --taesd PATH" --preview "$work/out/p.png"
expect 2 "^onnx2cl-sd: --fast-decode: needs --taesd PATH" --fast-decode
expect 2 "--preview-every 2: needs --preview F.png" --taesd "$root/models/ckpt/taesd/tiny_taesd" --preview-every 2
expect 2 "--preview .*p.jpg: onnx2cl-sd writes PNG only" --taesd "$root/models/ckpt/taesd/tiny_taesd" --preview "$work/out/p.jpg"
# a TAESD file given as the checkpoint: named as such (exit 2)
err=$("$sd" -m "$root/models/ckpt/taesd/tiny_taesd_decoder.safetensors" -p "a cat" -o "$work/out/x.png" 2>&1); st=$?
if [ "$st" -eq 2 ] && grep -q "a TAESD decoder (architecture tiny_taesd), not a checkpoint: give it as --taesd" <<<"$err"; then
  echo "ok (exit 2): $err"
else echo "FAIL -m TAESD: exit $st: $err"; fails=$((fails + 1)); fi
[ -d "$work/cache/programs" ] && { echo "FAIL: something was compiled: $(ls "$work/cache/programs")"; fails=$((fails + 1)); }
exit "$fails"

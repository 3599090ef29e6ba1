#!/bin/bash
# run_oneshot_sd2.sh — the SD 2.x proof of `onnx2cl-sd -m CHECKPOINT`: the tiny SD 2.x single file
# of tests/pipeline/oneshot_sd2 (architecture models/arch/tiny_sd2: linear projections, OpenCLIP
# text encoder with fused in_proj, float16) against diffusers' StableDiffusionPipeline on the same
# weights (oneshot_sd2/<case>.npy, models/make_oneshot_sd2_refs.py): max |got - ref| <= 1e-3 on
# the float image in [0,1], for
#   - no flag: arch.json's v_prediction and DDIM (what diffusers assumes for an SD 2.x file)
#   - --prediction-type epsilon / v_prediction (the 512-base vs 768 checkpoints: same keys)
#   - Euler and DPM++ 2M with v-prediction, Euler with epsilon
# with the architecture's shipped tokenizer (pad_token "!": prompts with "!" tokenize as
# transformers does) and the prediction type named on stderr.
#
# Usage: run_oneshot_sd2.sh ONNX2CL_SD O2C_COMPARE WORK_DIR
set -euo pipefail
sd=$1 compare=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
os=$here/oneshot_sd2
. "$(dirname "$0")/case_lib.sh"
case_setup "$os" "$work"
has() { grep -q -- "$2" "$work/$1.log" || bad "$1: no line '$2' in its log"; }
while IFS=$'\t' read -r name flags; do
  case $name in '#'*|'') continue ;; esac
  # shellcheck disable=SC2086
  if ! (cd "$os" && "$sd" -m tiny_sd2.safetensors -p "$prompt" -n "$negative" --width 32 --height 32 \
        --quiet -o "$work/$name.png" --save-image "$work/$name.npy" $flags) 2> "$work/$name.log"; then
    bad "$name: onnx2cl-sd exited non-zero"; cat "$work/$name.log"; continue
  fi
  if "$compare" "$work/$name.npy" "$os/$name.npy" 1e-3 0 > "$work/$name.cmp" 2>&1; then
    printf '%-16s %s\n' "$name" "$(head -c 160 "$work/$name.cmp")"
  else
    bad "$name: $(cat "$work/$name.cmp")"
  fi
  has "$name" "architecture tiny_sd2"
  case $flags in
    *"--prediction-type epsilon"*) has "$name" "prediction type epsilon (--prediction-type)" ;;
    *"--prediction-type v_prediction"*) has "$name" "prediction type v_prediction (--prediction-type)" ;;
    *) has "$name" "prediction type v_prediction (.*programs/tiny_sd2/scheduler_config.json)" ;;
  esac
done < "$os/cases.txt"
has default_ddim_4 "_class_name DDIMScheduler"
# the two prediction types must give different images (the flag is not ignored)
if "$compare" "$work/default_ddim_4.npy" "$work/eps_ddim_4.npy" 1e-3 0 > /dev/null 2>&1; then
  bad "epsilon and v_prediction gave the same image"
fi
echo "oneshot_sd2: $fails failed"
[ "$fails" = 0 ]

#!/bin/bash
# run_rescale.sh — onnx2cl-sd --guidance-rescale R (issue 21 item 5) against diffusers'
# guidance_rescale (rescale_noise_cfg) on the tiny SD 1.5 and SDXL checkpoints
# (rescale/<case>.npy, models/make_guidance_rescale_refs.py): max |got - ref| <= 1e-3 on the image
# in [0,1]; every case differs from its R = 0 image by > 0.1 there, so the flag is not ignored.
# Usage: run_rescale.sh ONNX2CL_SD O2C_COMPARE SOURCE_DIR WORK_DIR
set -uo pipefail
sd=$1 compare=$2 root=$3 work=$4
rs=$root/tests/pipeline/rescale
. "$(dirname "$0")/case_lib.sh"
case_setup "$rs" "$work"
while IFS=$'\t' read -r name ck flags; do
  case $name in '#'*|'') continue ;; esac
  # shellcheck disable=SC2086
  if ! "$sd" -m "$root/$ck" --arch-dir "$root/models/arch" -p "$prompt" -n "$negative" --width 32 --height 32 \
       --quiet -o "$work/$name.png" --save-image "$work/$name.npy" $flags 2> "$work/$name.log"; then
    bad "$name: onnx2cl-sd exited non-zero"; cat "$work/$name.log"; continue
  fi
  if "$compare" "$work/$name.npy" "$rs/$name.npy" 1e-3 0 > "$work/$name.cmp" 2>&1; then
    printf '%-20s %s\n' "$name" "$(head -c 160 "$work/$name.cmp")"
  else
    bad "$name: $(cat "$work/$name.cmp")"
  fi
done < "$rs/cases.txt"
"${PYTHON3:-python3}" "$root/tests/pipeline/check_infotext.py" "$work/sd15_euler_07_4.png" "Guidance rescale=0.7" \
  > /dev/null || bad "sd15_euler_07_4: no 'Guidance rescale: 0.7' in the metadata"
"$root/tests/bad_input/expect_error.sh" "$work/bad" "--guidance-rescale 1.5: expected a number in \[0, 1\]" \
  "$sd" -m "$root/tests/pipeline/oneshot/tiny_sd15.safetensors" -p x --guidance-rescale 1.5 -o "$work/bad/x.png" \
  > "$work/bad.log" || { bad "--guidance-rescale 1.5 not refused as expected"; cat "$work/bad.log"; }
echo "rescale: $fails failed"
[ "$fails" = 0 ]

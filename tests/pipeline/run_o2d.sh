#!/bin/bash
# run_o2d.sh — onnx2cl-sd with descriptor files (onnx2cl -o NAME.o2d; no C compiler, no dlopen)
# instead of shared objects: the three tiny models of build_tiny.sh compiled to .o2d, then cases
# of tests/pipeline/e2e run both ways: the image from the .o2d models equals the image from the
# .so models bit for bit, and diffusers' reference within 1e-3 (as run_e2e.sh). One case runs
# with --models DIR holding only .o2d files (the .so -> .o2d fallback), one with a mix; a
# truncated .o2d is refused (exit 1, the file named, no PNG).
# Usage: run_o2d.sh ONNX2CL ONNX2CL_SD O2C_COMPARE TOKENIZER_DIR WORK_DIR  (WORK_DIR: build_tiny.sh)
set -euo pipefail
onnx2cl=$1 sd=$2 compare=$3 tok=$4 work=$5
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
e2e=$here/e2e
export ONNX2CL_CACHE_DIR=${ONNX2CL_CACHE_DIR:-$work/cache}
o=$work/o2d
rm -rf "$o"; mkdir -p "$o"
"$onnx2cl" "$root/models/tiny/text_encoder/model.onnx" -o "$o/text_encoder.o2d" --shape input_ids=1,77
"$onnx2cl" "$root/models/tiny/vae_decoder/model.onnx" -o "$o/vae_decoder.o2d" --shape latent_sample=1,4,16,16
"$onnx2cl" "$root/models/tiny/unet/model.onnx" -o "$o/unet.o2d" --shape sample=2,4,16,16 --shape encoder_hidden_states=2,77,32
prompt=$(sed -n 's/^# prompt: //p' "$e2e/cases.txt")
negative=$(sed -n 's/^# negative: //p' "$e2e/cases.txt")
fails=0
sdrun() { # sdrun OUT FLAGS... (model flags included)
  local out=$1; shift
  (cd "$e2e" && "$sd" --tokenizer "$tok" --scheduler-config "$here/sched/sd15.json" \
      -p "$prompt" -n "$negative" --quiet -o "$out.png" --save-image "$out.npy" "$@") 2> "$out.log" || {
    echo "FAIL $(basename "$out"): onnx2cl-sd exited $?"; cat "$out.log"; fails=$((fails + 1)); return 1; }
}
for name in euler_a_4 dpmpp_2m_20; do
  flags=$(awk -F'\t' -v n="$name" '$1 == n {print $2}' "$e2e/cases.txt")
  # shellcheck disable=SC2086
  sdrun "$o/$name-so" --text-encoder "$work/text_encoder.so" --unet "$work/b2/unet.so" \
      --vae-decoder "$work/vae_decoder.so" $flags || continue
  # shellcheck disable=SC2086
  sdrun "$o/$name-o2d" --text-encoder "$o/text_encoder.o2d" --unet "$o/unet.o2d" \
      --vae-decoder "$o/vae_decoder.o2d" $flags || continue
  if cmp "$o/$name-so.npy" "$o/$name-o2d.npy"; then
    echo "$name: image from the .o2d models = image from the .so models, bit for bit"
  else
    echo "FAIL $name: the .o2d image differs from the .so image"; fails=$((fails + 1))
  fi
  "$compare" "$o/$name-o2d.npy" "$e2e/$name.npy" 1e-3 0 || fails=$((fails + 1))
done
# --models DIR with only .o2d files, and a mix (.so UNet, .o2d text encoder and VAE)
flags=$(awk -F'\t' -v n=euler_a_4 '$1 == n {print $2}' "$e2e/cases.txt")
# shellcheck disable=SC2086
if sdrun "$o/models-dir" --models "$o" $flags && cmp "$o/models-dir.npy" "$o/euler_a_4-so.npy"; then
  echo "--models DIR of .o2d files: same image"
else echo "FAIL --models DIR of .o2d files"; fails=$((fails + 1)); fi
# shellcheck disable=SC2086
if sdrun "$o/mixed" --text-encoder "$o/text_encoder.o2d" --unet "$work/b2/unet.so" \
      --vae-decoder "$o/vae_decoder.o2d" $flags && cmp "$o/mixed.npy" "$o/euler_a_4-so.npy"; then
  echo "mixed .so and .o2d: same image"
else echo "FAIL mixed .so and .o2d"; fails=$((fails + 1)); fi
# a damaged .o2d: exit 1 naming the file and the damage, no PNG
head -c 5000 "$o/unet.o2d" > "$o/unet_cut.o2d"
set +e
(cd "$e2e" && "$sd" --text-encoder "$o/text_encoder.o2d" --unet "$o/unet_cut.o2d" \
    --vae-decoder "$o/vae_decoder.o2d" --tokenizer "$tok" --scheduler-config "$here/sched/sd15.json" \
    -p x --steps 1 --quiet -o "$o/cut.png") 2> "$o/cut.log"
st=$?
set -e
if [ $st -eq 1 ] && grep -q "unet_cut.o2d: truncated: the header says" "$o/cut.log" && [ ! -e "$o/cut.png" ]; then
  echo "damaged .o2d refused: $(tail -n 1 "$o/cut.log")"
else echo "FAIL damaged .o2d: exit $st, $(cat "$o/cut.log")"; fails=$((fails + 1)); fi
echo "$fails failure(s)"
exit $((fails > 0))

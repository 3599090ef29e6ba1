#!/bin/bash
# run_flux.sh — Flux txt2img (FluxPipeline) of onnx2cl-sd --models against diffusers on the tiny
# random-weight Flux schnell and dev of tests/pipeline/flux (models/make_flux_refs.py): CLIP-L's pooled
# output, T5 (64 tokens), the transformer on 2x2-packed latents with img_ids/txt_ids (dev: the
# guidance input), the 16-channel VAE (scaling 0.3611, shift 0.1159); FlowMatchEulerDiscreteScheduler
# with FluxPipeline's sigmas and mu. The ONNX exports are compiled to .o2d files in WORK_DIR
# (onnx2cl -o); images compared with diffusers' (output_type "np"): max |got - ref| <= 1e-3 on the
# [0,1] image. Cases (flux/cases.txt): schnell 4 and 1 steps, dev guidance 3.5 and 5 with a long
# prompt (past 77 CLIP tokens, "</s>" and "!!"), dev with true CFG (a negative prompt, --cfg 4).
# Usage: run_flux.sh ONNX2CL ONNX2CL_SD O2C_COMPARE WORK_DIR
set -euo pipefail
onnx2cl=$1 sd=$2 compare=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
d=$here/flux
mkdir -p "$work/schnell" "$work/dev" "$work/out"
fails=0
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
compile() { # compile ONNX_NAME O2D_PATH
  if [ ! -f "$2" ] || [ "$d/onnx/$1.onnx" -nt "$2" ] || [ "$onnx2cl" -nt "$2" ]; then
    "$onnx2cl" "$d/onnx/$1.onnx" -o "$2" > "$2.log" 2>&1 || bad "compile $1: $(tail -3 "$2.log")"
  fi
}
for m in text_encoder text_encoder_2 vae_decoder; do
  compile "$m" "$work/$m.o2d"
  for v in schnell dev; do ln -sf "$work/$m.o2d" "$work/$m.weights" "$work/$v/"; done
done
for v in schnell dev; do compile "transformer_$v" "$work/$v/transformer.o2d"; done
[ "$fails" = 0 ] || { echo "flux: $fails failed"; exit 1; }
while IFS=$'\t' read -r name variant steps guidance cfg prompt negative; do
  [[ $name == \#* || -z $name ]] && continue
  neg=(); [ -n "$negative" ] && neg=(-n "$negative")
  if ! "$sd" --models "$work/$variant" --hf "$d/tiny_flux_$variant" -p "$prompt" "${neg[@]}" --steps "$steps" \
       --guidance "$guidance" --cfg "$cfg" --seed 42 --quiet -o "$work/out/$name.png" --save-image "$work/out/$name.npy" \
       2> "$work/out/$name.log"; then
    bad "$name: onnx2cl-sd exited non-zero: $(tail -3 "$work/out/$name.log")"; continue
  fi
  if "$compare" "$work/out/$name.npy" "$d/${name}_image.npy" 1e-3 0 > "$work/out/$name.cmp" 2>&1; then
    printf '%-4s %-8s %s\n' "$name" "$variant" "$(head -c 140 "$work/out/$name.cmp")"
  else
    bad "$name: $(cat "$work/out/$name.cmp")"
  fi
done < "$d/cases.txt"
grep -q "Flux dev" "$work/out/c.log" && grep -q "Flux schnell" "$work/out/a.log" || bad "the variant is not named on stderr"
echo "flux: $fails failed"
[ "$fails" = 0 ]

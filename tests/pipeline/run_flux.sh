#!/bin/bash
# run_flux.sh — Flux txt2img (FluxPipeline) of onnx2cl-sd --models against diffusers on the tiny
# random-weight Flux schnell and dev of tests/pipeline/flux (models/make_flux_refs.py): CLIP-L's pooled
# output, T5 (64 tokens), the transformer on 2x2-packed latents with img_ids/txt_ids (dev: the
# guidance input), the 16-channel VAE (scaling 0.3611, shift 0.1159); FlowMatchEulerDiscreteScheduler
# with FluxPipeline's sigmas and mu. The ONNX exports are compiled to .o2d files in WORK_DIR
# (onnx2cl -o); images compared with diffusers' (output_type "np"): max |got - ref| <= 1e-3 on the
# [0,1] image. Cases (flux/cases.txt): schnell 4 and 1 steps, dev guidance 3.5 and 5 with a long
# prompt (past 77 CLIP tokens, "</s>" and "!!"), dev with true CFG (a negative prompt, --cfg 4); -m on
# both folders (the engine: architectures tiny_flux_schnell/dev), another size, refusals.
# Usage: run_flux.sh ONNX2CL ONNX2CL_SD O2C_COMPARE WORK_DIR
set -euo pipefail
onnx2cl=$1 sd=$2 compare=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
d=$here/flux
mkdir -p "$work/schnell" "$work/dev" "$work/out"
fails=0
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
. "$(dirname "$0")/case_lib.sh" # proof, flow_i2i_cases, flow_lora_cases, expect
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
# one command (-m) on each diffusers folder: architectures tiny_flux_schnell / tiny_flux_dev found by their keys,
# compiled into WORK_DIR/cache; cases a (schnell) and e (dev, true CFG); then a second size from the same
# architecture (runs), and the refusals
export ONNX2CL_CACHE_DIR=$work/cache
p=$(awk -F'\t' '$1 == "a" {print $6}' "$d/cases.txt")
# e_file: the dev model as one ComfyUI-style file (models/make_single_files.py: BFL transformer keys under
# model.diffusion_model., LDM VAE, text_encoders.clip_l/t5xxl): the same image as the folder
for c in "a schnell 4 0.0 1.0 $d/tiny_flux_schnell" "e dev 4 3.5 4.0 $d/tiny_flux_dev" "e_file dev 4 3.5 4.0 $d/tiny_flux_dev.safetensors"; do
  read -r name variant steps guidance cfg ck <<< "$c"
  neg=(); [ "${name%_file}" = e ] && neg=(-n blurry)
  if "$sd" -m "$ck" -p "$p" "${neg[@]}" --steps "$steps" --guidance "$guidance" --cfg "$cfg" --seed 42 \
       --width 32 --height 32 --weights-dtype f32 --quiet -o "$work/out/m_$name.png" --save-image "$work/out/m_$name.npy" \
       2> "$work/out/m_$name.log"; then
    if "$compare" "$work/out/m_$name.npy" "$d/${name%_file}_image.npy" 1e-3 0 > "$work/out/m_$name.cmp" 2>&1; then
      printf '%-9s %-8s %s\n' "-m $name" "$variant" "$(head -c 140 "$work/out/m_$name.cmp")"
    else bad "-m $name: $(cat "$work/out/m_$name.cmp")"; fi
    grep -q "architecture tiny_flux_$variant" "$work/out/m_$name.log" || bad "-m $name: architecture not named"
  else
    bad "-m $ck: exited non-zero: $(tail -3 "$work/out/m_$name.log")"
  fi
done
# Black Forest Labs' transformer-only file with the VAE and text encoders as separate files (sd.cpp's
# --vae / --clip_l / --t5xxl: flux1-schnell.safetensors + ae.safetensors + clip_l + t5xxl): case a's image
f=$d/tiny_flux_schnell
bfl_case() { # bfl_case TAG T5_FILE [ARGS...]: the BFL file + --vae --clip-l --t5xxl T5_FILE (+ ARGS) == case a
  local tag=$1 t5=$2
  shift 2
  proof "m_$tag" "$d/a_image.npy" 20 -m "$d/tiny_flux_schnell_bfl.safetensors" \
    --vae "$f/vae/diffusion_pytorch_model.safetensors" --clip-l "$f/text_encoder/model.safetensors" --t5xxl "$t5" \
    -p "$p" --steps 4 --guidance 0.0 --cfg 1.0 --seed 42 --width 32 --height 32 "$@"
}
bfl_case bfl "$f/text_encoder_2/model.safetensors"
# --t5xxl as a whole T5ForConditionalGeneration file (decoder, lm_head, the tied encoder.embed_tokens copy):
# the encoder's keys are taken, the rest ignored; the same image
python3 - "$f/text_encoder_2/model.safetensors" "$work/t5_full.safetensors" <<'PY' || bad "could not write t5_full"
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head, data = json.loads(raw[8:8 + n]), raw[8 + n:]
meta = head.pop("__metadata__", None)
blobs = {k: data[v["data_offsets"][0]:v["data_offsets"][1]] for k, v in head.items()}
blobs["encoder.embed_tokens.weight"] = blobs["lm_head.weight"] = blobs["shared.weight"]
blobs["decoder.block.0.layer.0.SelfAttention.q.weight"] = bytes(4 * 16)
shapes = {k: head[k]["shape"] if k in head else head["shared.weight"]["shape"] for k in blobs}
shapes["decoder.block.0.layer.0.SelfAttention.q.weight"] = [4, 4]
out, off = {}, 0
for k in blobs:
    out[k] = {"dtype": "F32", "shape": shapes[k], "data_offsets": [off, off + len(blobs[k])]}
    off += len(blobs[k])
h = json.dumps(out).encode()
open(sys.argv[2], "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs.values()))
PY
bfl_case t5full "$work/t5_full.safetensors"
# T5's SentencePiece model from --t5-tokenizer when neither the checkpoint (a single file) nor the
# architecture has one (the full-size architectures ship none): an architecture folder without it,
# the flag naming the file, then its folder: case a's image; without the flag: refused, naming it
rm -rf "$work/arch" && mkdir -p "$work/arch" && cp -r "$here/../../models/arch/tiny_flux_schnell" "$work/arch/" &&
  rm "$work/arch/tiny_flux_schnell/tokenizer_2/spiece.model" || bad "could not make the architecture copy"
sp=$here/../../models/arch/tiny_flux_schnell/tokenizer_2/spiece.model
for how in file dir root; do # root: a diffusers download (its tokenizer_2/spiece.model)
  arg=$sp; [ $how = dir ] && arg=$(dirname "$sp"); [ $how = root ] && arg=$(dirname "$(dirname "$sp")")
  bfl_case "t5tok_$how" "$f/text_encoder_2/model.safetensors" --arch-dir "$work/arch" --t5-tokenizer "$arg"
done
bfl3="--vae $f/vae/diffusion_pytorch_model.safetensors --clip-l $f/text_encoder/model.safetensors --t5xxl $f/text_encoder_2/model.safetensors"
# shellcheck disable=SC2086
expect flux_t5tok_none "needs T5's SentencePiece model (spiece.model.*give --t5-tokenizer" -m "$d/tiny_flux_schnell_bfl.safetensors" --arch-dir "$work/arch" $bfl3 --width 32 --height 32
# shellcheck disable=SC2086
expect flux_t5tok_name "t5-tokenizer .*: expected a file named spiece.model" -m "$d/tiny_flux_schnell_bfl.safetensors" --arch-dir "$work/arch" --t5-tokenizer "$f/vae/diffusion_pytorch_model.safetensors" $bfl3 --width 32 --height 32
# shellcheck disable=SC2086
expect flux_t5tok_nofile "t5-tokenizer .*: no spiece.model in this folder (nor in its tokenizer_2/)" -m "$d/tiny_flux_schnell_bfl.safetensors" --arch-dir "$work/arch" --t5-tokenizer "$work/arch" $bfl3 --width 32 --height 32
# shellcheck disable=SC2086
expect flux_t5tok_missing "t5-tokenizer .*/nothing_here: no such file or folder" -m "$d/tiny_flux_schnell_bfl.safetensors" --arch-dir "$work/arch" --t5-tokenizer "$work/nothing_here" $bfl3 --width 32 --height 32
"$sd" -m "$d/tiny_flux_dev" -p "$p" --steps 2 --width 64 --height 48 --quiet -o "$work/out/m_64x48.png" 2> "$work/out/m_64x48.log" &&
  python3 -c 'import sys; from PIL import Image; sys.exit(Image.open(sys.argv[1]).size != (64, 48))' "$work/out/m_64x48.png" ||
  bad "-m at 64x48: $(tail -3 "$work/out/m_64x48.log")"
# img2img == diffusers' FluxImg2ImgPipeline (t_start = int(steps - steps x strength)) on the
# folders and the single files: case_lib.sh
flow_i2i_cases "$d" tiny_flux_
# inpainting == diffusers' FluxInpaintPipeline: case_lib.sh
flow_inp_cases "$d" tiny_flux_
# LoRAs == diffusers' load_lora_weights (diffusers/PEFT naming; case k: kohya's, fused modules): case_lib.sh
flow_lora_cases "$d" tiny_flux_dev
flow_overlay_case "$d" tiny_flux_ a --mask-overlay
# Only masked (diffusers' padding_mask_crop 4, A1111's Inpaint area): the box around the mask of the 48x40 image
# generated at 32x32 and pasted back == FluxInpaintPipeline's PNG (flux/inp_om_image.png) within one level
om_args=(-m "$d/tiny_flux_schnell" -p "$p" --steps 4 --cfg 1.0 --guidance 0.0 --seed 42 --strength 0.75
  --init-image "$d/../img2img/init_big.png" --mask "$d/../img2img/mask_om_rect.png" --only-masked
  --only-masked-padding 4 --width 32 --height 32 --weights-dtype f32 --quiet -o "$work/out/inp_om.png")
if "$sd" "${om_args[@]}" 2> "$work/out/inp_om.log" && python3 - "$work/out/inp_om.png" "$d/inp_om_image.png" <<'PY'
import sys
import numpy as np
from PIL import Image
a, b = (np.asarray(Image.open(f).convert("RGB"), dtype=np.int64) for f in sys.argv[1:3])
lv = int(np.abs(a - b).max()) if a.shape == b.shape else -1
print(f"inp_om (--only-masked, 48x40 image, 32x32 area) vs diffusers' padding_mask_crop: {a.shape}, max {lv} level(s)")
sys.exit(not 0 <= lv <= 1)
PY
then :; else bad "inp_om: $(tail -3 "$work/out/inp_om.log")"; fi
expect flux_m_size "multiples of 16" -m "$d/tiny_flux_dev" --width 40 --height 40
expect flux_no_hf "give --hf DIR" --models "$work/dev"
expect flux_refusal_names_flux "not ported for Flux" -m "$d/tiny_flux_schnell" --width 32 --height 32 --batch-size 2
expect flux_bfl_alone "holds the Flux transformer without vae (16-channel VAE), text_encoder (CLIP-L), text_encoder_2 (T5-XXL); add them with --vae F, --clip-l F, --t5xxl F" -m "$d/tiny_flux_schnell_bfl.safetensors" --width 32 --height 32
expect flux_bfl_no_vae "holds the Flux transformer without vae (16-channel VAE); add it with --vae F (e.g. ae.safetensors), or" -m "$d/tiny_flux_schnell_bfl.safetensors" --clip-l "$f/text_encoder/model.safetensors" --t5xxl "$f/text_encoder_2/model.safetensors" --width 32 --height 32
expect flux_swapped "clip-l .*: not a CLIP text encoder (a T5 encoder: give it as --t5xxl)" -m "$d/tiny_flux_schnell_bfl.safetensors" --vae "$f/vae/diffusion_pytorch_model.safetensors" --clip-l "$f/text_encoder_2/model.safetensors" --t5xxl "$f/text_encoder/model.safetensors" --width 32 --height 32
expect flux_vae_dir "vae .*: a folder, not a .safetensors file" -m "$d/tiny_flux_schnell_bfl.safetensors" --vae "$f/vae" --width 32 --height 32
expect flux_clip_g "Flux has no CLIP-G" -m "$d/tiny_flux_schnell_bfl.safetensors" --clip-g "$f/text_encoder/model.safetensors" --width 32 --height 32
expect flux_vae_no_m "need -m CHECKPOINT" --models "$work/schnell" --hf "$f" --vae "$f/vae/diffusion_pytorch_model.safetensors" --width 32 --height 32
expect flux_vae_bad "clip-l .*clip_l/model.safetensors: no such file" -m "$d/tiny_flux_schnell_bfl.safetensors" --vae "$f/vae/diffusion_pytorch_model.safetensors" --clip-l "$f/clip_l/model.safetensors" --t5xxl "$f/text_encoder_2/model.safetensors" --width 32 --height 32
expect flux_t5_is_vae "t5xxl .*: not a T5 text encoder (neither" -m "$d/tiny_flux_schnell_bfl.safetensors" --vae "$f/vae/diffusion_pytorch_model.safetensors" --clip-l "$f/text_encoder/model.safetensors" --t5xxl "$f/vae/diffusion_pytorch_model.safetensors" --width 32 --height 32
expect flux_no_t5 "Flux needs its T5" -m "$d/tiny_flux_dev" --width 32 --height 32 --no-t5
expect flux_lora_unet "the checkpoint has no unet" -m "$d/tiny_flux_dev" --width 32 --height 32 --lora "$here/../lora/tiny_peft.safetensors"
expect flux_lora_kohya_sd3 "LoRA modules match no weight of the checkpoint" -m "$d/tiny_flux_dev" --width 32 --height 32 --lora "$d/../sd3/lora_kohya.safetensors"
expect flux_init_size "init_big.png: Flux generates sizes that are multiples of 16, the image 48x40 is not: give --width and --height" -m "$d/tiny_flux_dev" --init-image "$d/../img2img/init_big.png"
expect flux_om_size "Flux generates sizes that are multiples of 16, the area around the mask, by default 48x40" -m "$d/tiny_flux_dev" --init-image "$d/../img2img/init_big.png" --mask "$d/../img2img/mask_om_rect.png" --only-masked
expect flux_text_device "text-device nonesuch: no OpenCL device matches it; available devices:" -m "$d/tiny_flux_dev" --width 32 --height 32 --text-device nonesuch
echo "flux: $fails failed"
[ "$fails" = 0 ]

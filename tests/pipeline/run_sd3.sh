#!/bin/bash
# run_sd3.sh — SD 3 txt2img (StableDiffusion3Pipeline) of onnx2cl-sd --models against diffusers on the
# tiny random-weight SD 3 of tests/pipeline/sd3 (models/make_sd3_refs.py): CLIP-L + CLIP-G with
# projection, T5, the MMDiT transformer (batch 2: guidance in one run), the 16-channel VAE;
# FlowMatchEulerDiscreteScheduler (shift 3). The ONNX exports are compiled to .o2d files in WORK_DIR
# (onnx2cl -o), the images compared with diffusers' (output_type "np"): max |got - ref| <= 1e-3 on
# the [0,1] image. Cases (sd3/cases.txt): guidance with a negative prompt, 1 step without guidance,
# an empty negative prompt, a prompt past 77 CLIP tokens with "!!" and T5's "</s>" in it; then
# without T5 (text_encoder_3 left out: zero embeddings, diffusers' text_encoder_3=None) and the
# refusals (an unported flag, a transformer without its --hf, a size the models do not make).
# Usage: run_sd3.sh ONNX2CL ONNX2CL_SD O2C_COMPARE WORK_DIR
set -euo pipefail
onnx2cl=$1 sd=$2 compare=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
d=$here/sd3
hf=$d/tiny_sd3
mkdir -p "$work/m" "$work/not5" "$work/out"
fails=0
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
. "$(dirname "$0")/case_lib.sh" # proof, flow_i2i_cases, flow_lora_cases, expect
for m in text_encoder text_encoder_2 text_encoder_3 transformer vae_decoder; do
  if [ ! -f "$work/m/$m.o2d" ] || [ "$d/onnx/$m.onnx" -nt "$work/m/$m.o2d" ] || [ "$onnx2cl" -nt "$work/m/$m.o2d" ]; then
    "$onnx2cl" "$d/onnx/$m.onnx" -o "$work/m/$m.o2d" > "$work/$m.compile.log" 2>&1 ||
      { bad "compile $m: $(tail -3 "$work/$m.compile.log")"; continue; }
  fi
  [ "$m" = text_encoder_3 ] || ln -sf "$work/m/$m.o2d" "$work/m/$m.weights" "$work/not5/" 2>/dev/null || true
done
[ "$fails" = 0 ] || { echo "sd3: $fails failed"; exit 1; }
run() { # run TAG REF MODELS_DIR STEPS CFG PROMPT NEGATIVE
  local tag=$1 ref=$2 mdir=$3 steps=$4 cfg=$5 prompt=$6 negative=$7
  if ! "$sd" --models "$mdir" --hf "$hf" -p "$prompt" -n "$negative" --steps "$steps" --cfg "$cfg" --seed 42 \
       --quiet -o "$work/out/$tag.png" --save-image "$work/out/$tag.npy" 2> "$work/out/$tag.log"; then
    bad "$tag: onnx2cl-sd exited non-zero: $(tail -3 "$work/out/$tag.log")"; return
  fi
  if "$compare" "$work/out/$tag.npy" "$d/${ref}_image.npy" 1e-3 0 > "$work/out/$tag.cmp" 2>&1; then
    printf '%-20s %s\n' "$tag" "$(head -c 150 "$work/out/$tag.cmp")"
  else
    bad "$tag: $(cat "$work/out/$tag.cmp")"
  fi
}
while IFS=$'\t' read -r name steps cfg prompt negative; do
  [[ $name == \#* || -z $name ]] && continue
  mdir=$work/m; [[ $name == *not5* ]] && mdir=$work/not5
  run "$name" "$name" "$mdir" "$steps" "$cfg" "$prompt" "$negative"
done < "$d/cases.txt"
# one command (-m): the diffusers folder itself, architecture tiny_sd3, the engine compiles into a cache;
# then the same model as one file in SAI's layout (models/make_single_files.py: MMDiT keys, LDM VAE,
# text_encoders.clip_l/clip_g/t5xxl): the same image
export ONNX2CL_CACHE_DIR=$work/cache
for c in "m_a $hf" "m_a_file $d/tiny_sd3.safetensors"; do
  read -r tag ck <<< "$c"
  if "$sd" -m "$ck" -p "$(awk -F'\t' '$1 == "a" {print $4}' "$d/cases.txt")" -n "$(awk -F'\t' '$1 == "a" {print $5}' "$d/cases.txt")" \
       --steps 4 --cfg 7.0 --seed 42 --width 32 --height 32 --weights-dtype f32 --quiet -o "$work/out/$tag.png" \
       --save-image "$work/out/$tag.npy" 2> "$work/out/$tag.log"; then
    if "$compare" "$work/out/$tag.npy" "$d/a_image.npy" 1e-3 0 > "$work/out/$tag.cmp" 2>&1; then
      printf '%-20s %s\n' "-m a ($tag)" "$(head -c 150 "$work/out/$tag.cmp")"
    else bad "-m a ($tag): $(cat "$work/out/$tag.cmp")"; fi
    grep -q "architecture tiny_sd3" "$work/out/$tag.log" || bad "-m $ck: architecture tiny_sd3 not named"
  else
    bad "-m $ck: exited non-zero: $(tail -3 "$work/out/$tag.log")"
  fi
done
# --batch-count 2 (A1111's n_iter): image 0 is case a (seed 42), image 1 the seed-43 image of a run of its own;
# out.png, out-1.png with their own Seed
pa=$(awk -F'\t' '$1 == "a" {print $4}' "$d/cases.txt") na=$(awk -F'\t' '$1 == "a" {print $5}' "$d/cases.txt")
if "$sd" -m "$hf" -p "$pa" -n "$na" --steps 4 --cfg 7.0 --seed 42 --batch-count 2 --width 32 --height 32 \
     --weights-dtype f32 --quiet -o "$work/out/bc.png" --save-image "$work/out/bc.npy" 2> "$work/out/bc.log" &&
   "$sd" -m "$hf" -p "$pa" -n "$na" --steps 4 --cfg 7.0 --seed 43 --width 32 --height 32 \
     --weights-dtype f32 --quiet -o "$work/out/s43.png" --save-image "$work/out/s43.npy" 2> "$work/out/s43.log"; then
  python3 - "$work/out" "$d/a_image.npy" <<'PY' || bad "--batch-count 2"
import sys
import numpy as np
from PIL import Image
out, ref = sys.argv[1], np.load(sys.argv[2])
bc, s43 = np.load(out + "/bc.npy"), np.load(out + "/s43.npy")
d0, d1 = float(np.abs(bc[0] - ref[0]).max()), float(np.abs(bc[1] - s43[0]).max())
seeds = [Image.open(f"{out}/{f}").text["parameters"].split("Seed: ")[1].split(",")[0] for f in ("bc.png", "bc-1.png")]
print(f"--batch-count 2: image 0 vs case a {d0:.2g}, image 1 vs --seed 43 {d1:.2g}, seeds {seeds}")
sys.exit(0 if bc.shape[0] == 2 and d0 <= 1e-3 and d1 == 0 and seeds == ["42", "43"] else 1)
PY
else
  bad "--batch-count 2: $(tail -3 "$work/out/bc.log" "$work/out/s43.log")"
fi
# without T5 through the engine: --no-t5, and a folder without text_encoder_3/ (arch.json's optional component)
rm -rf "$work/nt5" && cp -r "$hf" "$work/nt5" && rm -rf "$work/nt5/text_encoder_3"
# ... and the single file with an architecture that ships no T5 tokenizer (the full-size ones): not needed
rm -rf "$work/arch_nt5" && mkdir -p "$work/arch_nt5" && cp -r "$here/../../models/arch/tiny_sd3" "$work/arch_nt5/" &&
  rm -rf "$work/arch_nt5/tiny_sd3/tokenizer_3"
pa=$(awk -F'\t' '$1 == "not5" {print $4}' "$d/cases.txt") na=$(awk -F'\t' '$1 == "not5" {print $5}' "$d/cases.txt")
for c in "m_not5_flag $hf --no-t5" "m_not5_folder $work/nt5" "m_not5_file $d/tiny_sd3.safetensors --no-t5" \
         "m_not5_nospiece $d/tiny_sd3.safetensors --no-t5 --arch-dir $work/arch_nt5"; do
  read -r tag ck flag <<< "$c"
  # shellcheck disable=SC2086
  proof "$tag" "$d/not5_image.npy" 20 -m "$ck" $flag -p "$pa" -n "$na" --steps 4 --cfg 7.0 --seed 42 --width 32 --height 32
done
grep -q "T5 left out" "$work/out/"*not5*.log 2>/dev/null || [ ! -e "$d/not5_image.npy" ] || bad "no note that T5 was left out"
# img2img == diffusers' StableDiffusion3Img2ImgPipeline (t_start = int(steps - steps x strength)) on the
# folders and the single files: case_lib.sh
flow_i2i_cases "$d" tiny_
# inpainting == diffusers' StableDiffusion3InpaintPipeline (its latents decoded with the VAE shift): case_lib.sh
flow_inp_cases "$d" tiny_
# LoRAs == diffusers' load_lora_weights (diffusers/PEFT naming): case_lib.sh
flow_lora_cases "$d" tiny_sd3
# refusals: exit 2, a message, no PNG
expect sd3_no_hf "give --hf DIR" --models "$work/m"
expect sd3_batch "not ported for SD 3" --models "$work/m" --hf "$hf" --batch-size 2
expect sd3_size "compiled for 32x32" --models "$work/m" --hf "$hf" --width 64 --height 64
flow_overlay_case "$d" tiny_ a --only-masked
expect sd3_m_size "multiples of 16" -m "$hf" --width 40 --height 40
expect sd3_m_big "at most 256x256" -m "$hf" --width 512 --height 512
expect sd3_no_t5_unet "no-t5: SD 3's optional T5" -m "$here/oneshot/tiny_sd15.safetensors" --width 32 --height 32 --no-t5
expect sd3_guidance "takes --cfg" -m "$hf" --width 32 --height 32 --guidance 4
expect sd3_lora_unet "LoRA key 'unet.down_blocks.0.attentions.0.proj_in': the checkpoint has no unet" -m "$hf" --width 32 --height 32 --lora "$here/../lora/tiny_peft.safetensors"
expect sd3_lora_flux "LoRA modules match no weight of the checkpoint" -m "$hf" --width 32 --height 32 --lora "$d/../flux/lora_transformer.safetensors"
expect sd3_lora_kohya_sd1 "60 LoRA modules match no weight of the checkpoint (a LoRA for another architecture" -m "$hf" --width 32 --height 32 --lora "$here/../lora/tiny_kohya.safetensors"
expect sd3_lora_kohya_flux "LoRA modules match no weight of the checkpoint" -m "$hf" --width 32 --height 32 --lora "$d/../flux/lora_kohya.safetensors"
expect sd3_lora_models "need -m CHECKPOINT" --models "$work/m" --hf "$hf" --width 32 --height 32 --lora "$d/lora_transformer.safetensors"
# corrupt weights (NaN bytes in the transformer's data): refused, not decoded to a black image
rm -rf "$work/corrupt" && cp -r "$hf" "$work/corrupt"
python3 - "$work/corrupt/transformer/diffusion_pytorch_model.safetensors" <<'PY'
import os, sys
p = sys.argv[1]
n = os.path.getsize(p)
with open(p, "r+b") as f:  # 64 bytes of 0xff (float32 NaN) in the middle of the data region
    f.seek(n - n // 3)
    f.write(b"\xff" * 64)
PY
expect sd3_nan "NaN or infinite" -m "$work/corrupt" --width 32 --height 32 --steps 2
echo "sd3: $fails failed"
[ "$fails" = 0 ]

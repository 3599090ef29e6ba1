#!/bin/bash
# run_img2img.sh — batches, img2img and inpainting of onnx2cl-sd against diffusers'
# StableDiffusionPipeline / StableDiffusionImg2ImgPipeline / StableDiffusionInpaintPipeline on the
# tiny SD 1.5 diffusers folder tests/pipeline/oneshot/tiny_sd15 (refs: img2img/<case>.npy,
# tests/pipeline/make_img2img_refs.py, generator=[Generator().manual_seed(42 + i)]): max
# |got - ref| <= 1e-3 on the float image in [0,1] (float32 weights storage).
#   GROUP batch:   --batch-size 2 with and without guidance; --batch-count 2 (batch size 1) gives
#                  the --batch-size 2 images (seeds 42, 43); outputs out.png, out-1.png
#   GROUP img2img: strengths 0.3/0.5/0.6/0.75/1.0, euler/euler_a/ddim/dpmpp_2m, 4-20 steps,
#                  batch 1 and 2, with and without guidance; pndm/lms/unipc/dpmpp_2m_sde (noise
#                  per image) for their add_noise and begin index
#   GROUP inpaint: rect/circle/RGB/off-grid masks, strengths 0.5-1.0, batch 1 and 2, --mask-blur;
#                  --only-masked (diffusers' padding_mask_crop; img2img/om_*.png, 8-bit images of
#                  the init image's size: equal within 1 level, <= 1% of the values off by it:
#                  the [0,1] image within 1e-3 before 8-bit rounding)
#   GROUP inpaint9: the 9-channel inpainting UNet (architecture tiny_sd15_inpaint; the checkpoint
#                  made here by make_inpaint_ckpt.py from tiny_sd15, as the refs were): strengths
#                  0.6-1.0, batch 1 and 2, with and without guidance, --only-masked; without --mask
#                  it is refused
# The programs (text encoder, UNet b2 and b4, VAE decoder and encoder) compile into WORK_DIR's
# cache on the first run.
#
# Usage: run_img2img.sh ONNX2CL_SD O2C_COMPARE WORK_DIR GROUP [PYTHON3]
set -euo pipefail
sd=$1 compare=$2 work=$3 group=$4 py=${5:-python3}
here=$(cd "$(dirname "$0")" && pwd)
d=$here/img2img
ckpt=$here/oneshot/tiny_sd15
export ONNX2CL_CACHE_DIR=$work/cache
mkdir -p "$work/$group"
out=$work/$group
rm -f "$out"/*.png "$out"/*.npy "$out"/*.log
prompt=$(sed -n 's/^# prompt: //p' "$d/cases.txt")
negative=$(sed -n 's/^# negative: //p' "$d/cases.txt")
fails=0
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
run() { # run TAG CASE [EXTRA FLAGS]: the case's flags, compared with img2img/CASE.npy
  local tag=$1 name=$2 extra=${3-} flags
  flags="$(awk -F'\t' -v n="$name" '$1 == n {print $2}' "$d/cases.txt") $extra"
  [ -n "$flags" ] || { bad "$tag: no case $name"; return; }
  # shellcheck disable=SC2086
  if ! (cd "$d" && "$sd" -m "${ck:-$ckpt}" -p "$prompt" -n "$negative" --width 32 --height 32 --quiet \
        --weights-dtype f32 -o "$out/$tag.png" --save-image "$out/$tag.npy" $flags) 2> "$out/$tag.log"; then
    if [ -n "${may_refuse-}" ] && grep -q "has no img2img here (add_noise)" "$out/$tag.log"; then
      echo "skip $tag: the scheduler has no add_noise for it yet"; return; fi
    bad "$tag: onnx2cl-sd exited non-zero"; cat "$out/$tag.log"; return
  fi
  if "$compare" "$out/$tag.npy" "$d/$name.npy" 1e-3 0 > "$out/$tag.cmp" 2>&1; then
    printf '%-32s %s\n' "$tag" "$(head -c 150 "$out/$tag.cmp")"
  else
    bad "$tag: $(cat "$out/$tag.cmp")"
  fi
}
om_run() { # om_run CASE: an --only-masked case, its PNG(s) against diffusers' 8-bit image(s) img2img/CASE[-i].png
  local name=$1 flags n=1
  flags="$(awk -F'\t' -v n="$name" '$1 == n {print $2}' "$d/cases.txt")"
  [[ $flags == *"--batch-size 2"* ]] && n=2
  # shellcheck disable=SC2086
  if ! (cd "$d" && "$sd" -m "${ck:-$ckpt}" -p "$prompt" -n "$negative" --width 32 --height 32 --quiet \
        --weights-dtype f32 -o "$out/$name.png" $flags) 2> "$out/$name.log"; then
    bad "$name: onnx2cl-sd exited non-zero"; cat "$out/$name.log"; return
  fi
  for ((i = 0; i < n; i++)); do
    local f=$name${i/#0/}; [ "$i" = 0 ] || f=$name-$i
    if r=$("$py" - "$out/$f.png" "$d/$f.png" <<'PY'
import sys
import numpy as np
from PIL import Image
got, ref = (np.asarray(Image.open(p).convert("RGB")).astype(int) for p in sys.argv[1:3])
if got.shape != ref.shape:
    sys.exit(f"size {got.shape[1]}x{got.shape[0]}, diffusers {ref.shape[1]}x{ref.shape[0]}")
d = np.abs(got - ref)
print(f"max {d.max()} level(s), {(d > 0).mean() * 100:.2f}% of values differ")
sys.exit(0 if d.max() <= 1 and (d > 0).mean() <= 0.01 else 1)
PY
    ); then printf '%-32s %s\n' "$f" "$r"; else bad "$f: $r"; fi
  done
}
case $group in
batch)
  run b2_euler_a_4 b2_euler_a_4
  for f in b2_euler_a_4.png b2_euler_a_4-1.png; do [ -f "$out/$f" ] || bad "no $f written"; done
  [ ! -e "$out/b2_euler_a_4-2.png" ] || bad "a third image written for --batch-size 2"
  # the same two images one after the other (A1111's n_iter): UNet batch 2 (guidance), seeds 42, 43
  run count2_euler_a_4 b2_euler_a_4 "--batch-size 1 --batch-count 2"
  run b2_nocfg_dpmpp_4 b2_nocfg_dpmpp_4
  # the metadata reads back with A1111's parser (seed of each image, sampler, size, model)
  "$py" "$here/check_infotext.py" "$out/b2_euler_a_4.png" "Seed=42" "Sampler=Euler a" "Size-1=32" \
    "Model=tiny_sd15" "Steps=4" "CFG scale=7.5" "Prompt=$prompt" "Negative prompt=$negative" || bad "infotext b2_euler_a_4.png"
  "$py" "$here/check_infotext.py" "$out/b2_euler_a_4-1.png" "Seed=43" || bad "infotext b2_euler_a_4-1.png"
  "$py" "$here/check_infotext.py" "$out/count2_euler_a_4-1.png" "Seed=43" || bad "infotext count2_euler_a_4-1.png"
  # UTF-8 prompt (an iTXt chunk, as PIL writes non-Latin-1 text), a value with ',' and ':' quoted
  "$sd" -m "$ckpt" -p "café 日本, x: y" -n "ß" --width 32 --height 32 --steps 1 --quiet -o "$out/utf8.png" 2> "$out/utf8.log" ||
    bad "utf8 run: $(cat "$out/utf8.log")"
  "$py" "$here/check_infotext.py" "$out/utf8.png" "Prompt=café 日本, x: y" "Negative prompt=ß" "Steps=1" || bad "infotext utf8.png"
  ;;
img2img)
  for c in i2i_euler_075_4 i2i_euler_a_03_20 i2i_ddim_1_4 i2i_dpmpp_05_10 i2i_b2_euler_a_075_4 i2i_b2_nocfg_ddim_06_5 \
           i2i_pndm_075_8 i2i_lms_05_6 i2i_unipc_06_5 i2i_b2_dpmpp_2m_sde_075_4; do
    run "$c" "$c"
  done
  # order-2 samplers: the loop begins at t_start * 2 (checked against diffusers with an Euler-style
  # add_noise: 3.3e-6); run once scheduler.c's add_noise accepts them
  may_refuse=1 run i2i_heun_06_5 i2i_heun_06_5
  "$py" "$here/check_infotext.py" "$out/i2i_euler_a_03_20.png" "Denoising strength=0.3" "Steps=20" \
    "Sampler=Euler a" || bad "infotext i2i_euler_a_03_20.png"
  # an init image of another size is resized to --width/--height as PIL's Image.resize(LANCZOS)
  # (A1111's "Just resize"): the same image as from PIL's resized copy, bit for bit
  "$py" -c 'import sys; from PIL import Image
Image.open(sys.argv[1]).convert("RGB").resize((32, 32), Image.LANCZOS).save(sys.argv[2])' "$d/bad_size48.png" "$out/pil32.png"
  for f in "$d/bad_size48.png" "$out/pil32.png"; do
    "$sd" -m "$ckpt" -p "$prompt" --width 32 --height 32 --steps 4 --seed 42 --quiet --weights-dtype f32 --init-image "$f" --strength 0.6 \
      -o "$out/rs_$(basename "$f")" --save-image "$out/rs_$(basename "$f" .png).npy" 2> "$out/rs_$(basename "$f").log" ||
      bad "resize: $(cat "$out/rs_$(basename "$f").log")"
  done
  cmp -s "$out/rs_bad_size48.npy" "$out/rs_pil32.npy" || bad "a 48x48 init image resized by onnx2cl-sd != PIL's LANCZOS resize"
  grep -q "48x48 resized to 32x32" "$out/rs_bad_size48.png.log" || bad "resize: no note on stderr"
  ;;
inpaint)
  for c in inp_rect_euler_1_4 inp_circle_euler_a_075_4 inp_half_ddim_05_10 inp_odd_dpmpp_075_6 \
           inp_b2_rect_euler_a_1_4 inp_b2_nocfg_circle_euler_08_4; do
    run "$c" "$c"
  done
  may_refuse=1 run inp_dpm2_a_rect_075_4 inp_dpm2_a_rect_075_4
  # --mask-blur: PIL's GaussianBlur of the mask, bit for bit (a blur moves the 0.5 boundary)
  run inp_blur6_circle_euler_075_4 inp_blur6_circle_euler_075_4
  run inp_blur3_rect_euler_a_1_4 inp_blur3_rect_euler_a_1_4
  "$py" "$here/check_infotext.py" "$out/inp_blur6_circle_euler_075_4.png" "Mask blur=6" || bad "infotext: Mask blur 6"
  # a mask of another size: blurred at its size, convert("L"), resized to the image's size with
  # PIL's LANCZOS (diffusers' mask_processor order), then binarized: as from PIL's copy, bit for bit
  "$py" -c 'import sys; from PIL import Image, ImageFilter
m = Image.open(sys.argv[1]).convert("RGB").resize((64, 48), Image.NEAREST); m.save(sys.argv[2])
m.filter(ImageFilter.GaussianBlur(3)).convert("L").resize((32, 32), Image.LANCZOS).save(sys.argv[3])' \
    "$d/mask_circle.png" "$out/mask64x48.png" "$out/mask_pil32.png"
  for m in "$out/mask64x48.png --mask-blur 3" "$out/mask_pil32.png"; do
    n=$(basename "${m%% *}" .png)
    # shellcheck disable=SC2086
    (cd "$d" && "$sd" -m "$ckpt" -p "$prompt" --width 32 --height 32 --steps 4 --seed 42 --quiet --weights-dtype f32 --init-image init.png \
      --mask $m -o "$out/rm_$n.png" --save-image "$out/rm_$n.npy") 2> "$out/rm_$n.log" || bad "mask resize: $(cat "$out/rm_$n.log")"
  done
  cmp -s "$out/rm_mask64x48.npy" "$out/rm_mask_pil32.npy" || bad "a 64x48 mask resized by onnx2cl-sd != PIL's blur + L + LANCZOS"
  "$py" "$here/check_infotext.py" "$out/inp_half_ddim_05_10.png" "Denoising strength=0.5" "Mask blur=0" \
    "Sampler=DDIM" || bad "infotext inp_half_ddim_05_10.png"
  # --mask-overlay (A1111's paste-back over the whole picture): outside the blurred mask the init image's pixels,
  # where the mask is 255 the plain run's (inp_rect_euler_1_4 above)
  if (cd "$d" && "$sd" -m "$ckpt" -p "$prompt" -n "$negative" --width 32 --height 32 --quiet --weights-dtype f32 \
        -o "$out/overlay.png" $(awk -F'\t' '$1 == "inp_rect_euler_1_4" {print $2}' "$d/cases.txt") \
        --mask-overlay) 2> "$out/overlay.log"; then
    "$py" - "$out/overlay.png" "$out/inp_rect_euler_1_4.png" "$d/init.png" "$d/mask_rect.png" <<'PY' || bad "--mask-overlay"
import sys
import numpy as np
from PIL import Image
ov, plain, init = (np.asarray(Image.open(p).convert("RGB")).astype(int) for p in sys.argv[1:4])
m = np.asarray(Image.open(sys.argv[4]).convert("L"))
out, full = m == 0, m == 255
ok = (ov[out] == init[out]).all() and (ov[full] == plain[full]).all() and out.any() and full.any()
print(f"--mask-overlay: {int(out.sum())} pixels outside the mask == init: {(ov[out] == init[out]).all()}, "
      f"{int(full.sum())} inside == the plain run: {(ov[full] == plain[full]).all()}")
sys.exit(0 if ok else 1)
PY
  else bad "--mask-overlay: $(tail -3 "$out/overlay.log")"; fi
  # --only-masked: the box around the mask generated at 32x32 and pasted back (diffusers' padding_mask_crop)
  for c in om_rect_euler_075_4 om_blur_circle_euler_a_1_4 om_wide_dpmpp_075_6 om_b2_rect_euler_a_08_4; do
    om_run "$c"
  done
  "$py" "$here/check_infotext.py" "$out/om_blur_circle_euler_a_1_4.png" "Inpaint area=Only masked" \
    "Masked area padding=8" "Mask blur=3" "Size-1=32" "Size-2=32" || bad "infotext om_blur_circle_euler_a_1_4.png"
  ;;
inpaint9)
  "$py" "$here/make_inpaint_ckpt.py" "$ckpt" "$work/tiny_inpaint"
  ck=$work/tiny_inpaint
  for c in inp9_rect_euler_075_4 inp9_circle_euler_a_1_4 inp9_b2_half_ddim_1_5 inp9_b2_nocfg_odd_dpmpp_06_6 \
           inp9_blur2_odd_ddim_075_5; do
    run "$c" "$c"
  done
  om_run om9_circle_ddim_075_5
  grep -q "architecture tiny_sd15_inpaint" "$out/inp9_rect_euler_075_4.log" 2>/dev/null ||
    grep -q "tiny_sd15_inpaint" "$out"/*.log || bad "the inpainting checkpoint was not recognized as tiny_sd15_inpaint"
  if (cd "$d" && "$sd" -m "$ck" -p x --width 32 --height 32 --quiet --init-image init.png -o "$out/nomask.png") \
       > "$out/nomask.log" 2>&1; then bad "an inpainting UNet without --mask ran"
  else grep -q "an inpainting UNet (9 input channels" "$out/nomask.log" || bad "nomask: $(cat "$out/nomask.log")"; fi
  [ ! -e "$out/nomask.png" ] || bad "nomask: wrote a PNG"
  ;;
*) echo "unknown group $group"; exit 2 ;;
esac
echo "img2img $group: $fails failed"
[ "$fails" = 0 ]

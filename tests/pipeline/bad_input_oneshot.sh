#!/bin/bash
# bad_input_oneshot.sh — `onnx2cl-sd -m` refusals: exit 1 (2 for flags) with a message naming the
# file or folder, and nothing written (no PNG, no cache entry): a checkpoint of no installed
# architecture (the message names the closest and its first differences), a pickle .ckpt, a
# missing file, a cache folder that cannot be written (under a regular file; also chmod 555 when
# not root), -m together with --models, a size that is not a multiple of the VAE factor, an
# output that would overwrite the checkpoint, a LoRA or a cache file; img2img/inpainting/batch
# flags: missing, non-PNG, truncated, 16-bit gray init images, a folder, another size, strength
# outside (0, 1] or too small for the steps, masks alone, of another size, all black or white,
# --batch-size 0, an unclosed <lora: tag.
# Usage: bad_input_oneshot.sh ONNX2CL_SD WORK_DIR
set -uo pipefail
sd=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
tiny=$root/tests/pipeline/oneshot/tiny_sd15.safetensors
rm -rf "$work"; mkdir -p "$work"
export ONNX2CL_CACHE_DIR=$work/cache
fails=0 n=0
. "$(dirname "$0")/sd_expect.sh"
expect() { sd_expect "$1" "$2" "$3" -- -p "a cat" "${@:5}"; } # expect NAME STATUS PATTERN -- ARGS...
expect unknown_arch 1 "closest tiny_sd15 (7 keys equal" -- -m "$root/models/ckpt/sd1/sd1.safetensors"
grep -q "conv_in.weight: dims \[8,4,3,3\], expected \[32,4,3,3\]" "$work/unknown_arch.err" ||
  { echo "FAIL unknown_arch: no key difference listed"; fails=$((fails + 1)); }
printf 'PK\003\004not a real zip' > "$work/model.ckpt"
expect pickle 1 "pickle" -- -m "$work/model.ckpt"
expect missing 1 "no-such.safetensors: no such file or folder" -- -m "$work/no-such.safetensors"
# a LoRA given as the checkpoint: named as a LoRA, with how to apply it (not an architecture mismatch)
expect lora_as_ckpt 1 "tiny_peft.safetensors is a LoRA (diffusers/PEFT naming), not a checkpoint: use --lora" -- -m "$root/tests/lora/tiny_peft.safetensors"
touch "$work/afile"
ONNX2CL_CACHE_DIR=$work/afile/cache expect cache_under_file 1 "cache folder $work/afile/cache.*cannot be written" -- -m "$tiny"
if [ "$(id -u)" != 0 ]; then
  mkdir -p "$work/ro"; chmod 555 "$work/ro"
  ONNX2CL_CACHE_DIR=$work/ro expect cache_read_only 1 "cache folder $work/ro.*cannot be written" -- -m "$tiny"
  [ -z "$(ls -A "$work/ro")" ] || { echo "FAIL cache_read_only: wrote into it"; fails=$((fails + 1)); }
  chmod 755 "$work/ro"
fi
expect with_models 2 "drop --models" -- -m "$tiny" --models "$work"
expect odd_size 2 "multiples of 4 .its VAE's factor 2 times its UNet's 2" -- -m "$tiny" --width 33
# a multiple of the VAE factor that the UNet's down/up blocks cannot take (a Concat in the compiler)
expect unet_size 2 "--width 30 --height 34: architecture tiny_sd15 needs multiples of 4" -- -m "$tiny" --width 30 --height 34
expect no_arch_dir 1 "no architecture installed" -- -m "$tiny" --arch-dir "$work"
# an output that is an input of the engine (the checkpoint, a file of a checkpoint folder, a LoRA)
# or lies in the cache: refused before any work, the input intact
cp "$tiny" "$work/ck.safetensors"; cp "$root/tests/lora/tiny_peft.safetensors" "$work/l.safetensors"
expect out_is_ckpt 2 "is the checkpoint $work/ck.safetensors" -- -m "$work/ck.safetensors" --save-image "$work/ck.safetensors"
expect out_in_folder 2 "lies inside the checkpoint folder" -- -m "$root/tests/pipeline/oneshot/tiny_sd15" \
  --save-image "$root/tests/pipeline/oneshot/tiny_sd15/unet/diffusion_pytorch_model.safetensors"
expect out_is_lora 2 "is the LoRA $work/l.safetensors" -- -m "$tiny" --lora "$work/l.safetensors:0.8" \
  --save-image "$work/l.safetensors"
mkdir -p "$work/cache"
expect out_in_cache 2 "lies in the cache folder" -- -m "$tiny" --save-image "$work/cache/x.npy"
# img2img / inpainting / batches (issue 21): refused before anything is compiled, naming the flag
im=$root/tests/pipeline/img2img
printf 'not a png at all' > "$work/text.png"
head -c 120 "$im/init.png" > "$work/cut.png"
expect init_missing 1 "init-image $work/none.png: No such file" -- -m "$tiny" --init-image "$work/none.png"
expect init_not_png 1 "init-image $work/text.png: not a PNG file" -- -m "$tiny" --init-image "$work/text.png"
expect init_cut 1 "init-image $work/cut.png: corrupt or truncated PNG" -- -m "$tiny" --init-image "$work/cut.png"
# RGBA, palette and gray init images are read as PIL's convert("RGB") (png_read.c; values checked
# by pipeline.png_read) and resized (run_img2img.sh): accepted, so a width that is not a multiple
# of the VAE factor, checked next, is what refuses them here
expect init_rgba 2 "--width 33 --height 32: architecture tiny_sd15 needs multiples of 4" -- -m "$tiny" --init-image "$im/bad_rgba.png" --width 33 --height 32
expect init_palette 2 "--width 30 --height 32: architecture tiny_sd15 needs multiples of 4" -- -m "$tiny" --init-image "$im/bad_palette.png" --width 30 --height 32
expect init_gray 2 "--width 26 --height 32: architecture tiny_sd15 needs multiples of 4" -- -m "$tiny" --init-image "$im/bad_gray.png" --width 26 --height 32
expect init_16bit 2 "PNG mode grayscale 16-bit: not read" -- -m "$tiny" --init-image "$im/bad_gray16.png"
expect init_dir 1 "init-image $im: is a directory" -- -m "$tiny" --init-image "$im"
expect latents_png 1 "latents $im/init.png: a PNG image, not a tensor file" -- -m "$tiny" --latents "$im/init.png"
expect strength_big 2 "strength 1.5: expected a number in (0, 1]" -- -m "$tiny" --init-image "$im/init.png" --strength 1.5
expect strength_zero 2 "strength 0: expected a number in (0, 1]" -- -m "$tiny" --init-image "$im/init.png" --strength 0
expect strength_few 2 "int(4 \* 0.2) = 0 denoising steps" -- -m "$tiny" --init-image "$im/init.png" --strength 0.2 --steps 4
expect strength_alone 2 "strength: needs --init-image" -- -m "$tiny" --strength 0.5
expect mask_alone 2 "mask $im/mask_rect.png: needs --init-image" -- -m "$tiny" --mask "$im/mask_rect.png"
expect mask_black 2 "all black" -- -m "$tiny" --init-image "$im/init.png" --mask "$im/mask_black.png"
expect mask_white 2 "all white" -- -m "$tiny" --init-image "$im/init.png" --mask "$im/mask_white.png"
expect mask_blurred_away 2 "all black (no pixel >= 128 after --mask-blur)" -- -m "$tiny" --init-image "$im/init.png" --mask "$im/mask_circle.png" --mask-blur 10
expect blur_alone 2 "mask-blur: needs --mask" -- -m "$tiny" --mask-blur 4
expect om_alone 2 "only-masked: needs --init-image and --mask" -- -m "$tiny" --init-image "$im/init.png" --only-masked
expect om_pad_alone 2 "only-masked-padding: needs --only-masked" -- -m "$tiny" --init-image "$im/init.png" --mask "$im/mask_rect.png" --only-masked-padding 8
expect om_pad_negative 2 "only-masked-padding" -- -m "$tiny" --init-image "$im/init.png" --mask "$im/mask_rect.png" --only-masked --only-masked-padding -3
expect overlay_alone 2 "mask-overlay: needs --init-image and --mask" -- -m "$tiny" --init-image "$im/init.png" --mask-overlay
expect om_pad_fraction 2 "only-masked-padding 3.5: expected an integer" -- -m "$tiny" --init-image "$im/init.png" --mask "$im/mask_rect.png" --only-masked --only-masked-padding 3.5
expect guidance_unet 2 "guidance: Flux dev's distilled guidance" -- -m "$tiny" --guidance 3
expect om_black 2 "all black" -- -m "$tiny" --init-image "$im/init.png" --mask "$im/mask_black.png" --only-masked
expect mask_gray16 2 "mask $im/bad_gray16.png: PNG mode grayscale 16-bit" -- -m "$tiny" --init-image "$im/init.png" --mask "$im/bad_gray16.png"
expect batch_zero 2 "batch-size 0: expected" -- -m "$tiny" --batch-size 0
expect batch_frac 2 "batch-size 1.5: expected an integer" -- -m "$tiny" --batch-size 1.5
expect count_zero 2 "batch-count 0: expected" -- -m "$tiny" --batch-count 0
expect seed_neg 2 "seed -2: expected an integer" -- -m "$tiny" --seed -2
expect lora_scale 2 "lora $root/tests/lora/tiny_peft.safetensors:abc: scale 'abc' is not a number" -- -m "$tiny" --lora "$root/tests/lora/tiny_peft.safetensors:abc"
expect lora_open 2 "character 7): '<lora:' without its closing '>'" -- -m "$tiny" -p "a cat <lora:tiny_peft:0.8"
expect lora_empty 2 "no LoRA name" -- -m "$tiny" -p "a cat <lora:>"
# a batch's later output that is an input: refused before any work
expect out_jpg 2 "writes PNG only" -- -m "$tiny" -o "$work/x.JPG"
cp "$im/init.png" "$work/x-1.png"
expect out_batch_input 2 "is the --init-image" -- -m "$tiny" --init-image "$work/x-1.png" --batch-size 2 -o "$work/x.png"
cmp -s "$tiny" "$work/ck.safetensors" && cmp -s "$root/tests/lora/tiny_peft.safetensors" "$work/l.safetensors" ||
  { echo "FAIL: an input was changed"; fails=$((fails + 1)); }
[ ! -e "$work/cache" ] || [ -z "$(find "$work/cache" -name '*.o2d' -o -name '*.weights')" ] ||
  { echo "FAIL: a refused run left cache entries"; fails=$((fails + 1)); }
echo "$n cases, $fails failed"
[ "$fails" = 0 ]

#!/bin/bash
# run_oneshot.sh — the proof of `onnx2cl-sd -m CHECKPOINT` (one command, cache): the tiny SD 1.5
# checkpoint of tests/pipeline/oneshot (architecture models/arch/tiny_sd15) as one LDM
# .safetensors file and as a diffusers folder, against the images diffusers'
# StableDiffusionPipeline.from_single_file / from_pretrained make from the same files
# (oneshot/<case>-{single,folder}.npy, models/make_oneshot_refs.py): max |got - ref| <= 1e-3 on
# the float image in [0,1] with float32 weights storage (--weights-dtype f32), <= 5e-3 with the
# default float16 storage. On a fresh cache: the first single-file run compiles the three
# programs and converts the weights (progress lines), the same run again compiles and converts
# nothing (no progress line, every cache file's mtime unchanged, preparation <= 1 s), the folder
# reuses the programs and converts only its weights, guidance off (UNet batch 1) compiles one more
# UNet program; a damaged cached weights file (changed byte, truncated) is converted again, same
# image; no temporary file is left in the cache.
#
# Usage: run_oneshot.sh ONNX2CL_SD O2C_COMPARE WORK_DIR
set -euo pipefail
sd=$1 compare=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
os=$here/oneshot
. "$(dirname "$0")/case_lib.sh"
case_setup "$os" "$work"
run() { # run TAG CKPT CASE [ATOL [FLAGS]]: float32 weights storage (bound 1e-3) unless FLAGS say
  local tag=$1 ckpt=$2 name=$3 atol=${4:-1e-3} extra=${5---weights-dtype f32} flags
  flags="$(awk -F'\t' -v n="$name" '$1 == n {print $2}' "$os/cases.txt") $extra"
  # a bare single file takes the architecture's scheduler (SD 1.5's PNDM); the euler/nocfg
  # references were made with EulerDiscreteScheduler on both forms (the folder's own config)
  [ -d "$os/$ckpt" ] || case $name in pndm_*) ;; *) flags="$flags --scheduler euler" ;; esac
  # shellcheck disable=SC2086
  if ! (cd "$os" && "$sd" -m "$ckpt" -p "$prompt" -n "$negative" --width 32 --height 32 --quiet \
        -o "$work/$tag.png" --save-image "$work/$tag.npy" $flags) 2> "$work/$tag.log"; then
    bad "$tag: onnx2cl-sd exited non-zero"; cat "$work/$tag.log"; return
  fi
  local kind=single; [ -d "$os/$ckpt" ] && kind=folder
  if "$compare" "$work/$tag.npy" "$os/$name-$kind.npy" "$atol" 0 > "$work/$tag.cmp" 2>&1; then
    printf '%-16s %s\n' "$tag" "$(head -c 160 "$work/$tag.cmp")"
  else
    bad "$tag: $(cat "$work/$tag.cmp")"
  fi
}
has() { grep -q -- "$2" "$work/$1.log" || bad "$1: no line '$2' in its log"; }
hasnt() { ! grep -q -- "$2" "$work/$1.log" || bad "$1: unexpected line '$2': $(grep -- "$2" "$work/$1.log" | head -1)"; }
snapshot() { (cd "$ONNX2CL_CACHE_DIR" && find programs weights -type f -printf '%p %s %T@\n' | LC_ALL=C sort); }

# 1. single file, cold cache: compiles the three programs, converts the weights
run single1 tiny_sd15.safetensors euler_4
has single1 "architecture tiny_sd15"
has single1 "compiling unet for 32x32-b2 (first use)"
has single1 "compiling text_encoder"
has single1 "compiling vae_decoder for 32x32-b1"
grep -q "3 compiled, 3 converted" "$work/single1.log" || bad "single1: not 3 compiled, 3 converted"
snapshot > "$work/cache1.txt"
# 2. the same again: a cache hit (nothing compiled or converted, nothing rewritten)
run single2 tiny_sd15.safetensors euler_4
hasnt single2 "compiling"
hasnt single2 "converting"
grep -q "0 compiled, 0 converted" "$work/single2.log" || bad "single2: not 0 compiled, 0 converted"
snapshot > "$work/cache2.txt"
cmp -s "$work/cache1.txt" "$work/cache2.txt" || bad "cache files changed on a cache hit: $(diff "$work/cache1.txt" "$work/cache2.txt" | head -5)"
prep=$(awk '/checkpoint\/cache/ {print $3}' "$work/single2.log")
load=$(awk '/load models/ {print $4}' "$work/single2.log")
echo "cache hit: checkpoint/cache ${prep} s, load models ${load} s"
awk -v p="$prep" 'BEGIN {exit !(p <= 1.0)}' || bad "single2: preparation took $prep s on a cache hit (> 1 s)"
# 2b. a damaged cache entry is converted again, not trusted: the UNet's weights with a byte changed
#     (checksum) and the text encoder's truncated; the same image as before, the others untouched
wdir=$(dirname "$(find "$ONNX2CL_CACHE_DIR/weights" -name unet.weights | head -1)")
"${PYTHON3:-python3}" -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[5000] ^= 0xff; open(p, "wb").write(b)' "$wdir/unet.weights"
truncate -s 50000 "$wdir/text_encoder.weights"
run single_damaged tiny_sd15.safetensors euler_4
has single_damaged "unet.weights is corrupt: payload checksum .*; converting the unet weights again"
has single_damaged "text_encoder.weights is truncated: 50000 bytes.*; converting the text_encoder weights again"
hasnt single_damaged "converting the vae_decoder weights again"
grep -q "0 compiled, 2 converted" "$work/single_damaged.log" || bad "single_damaged: not 0 compiled, 2 converted"
cmp -s "$work/single1.png" "$work/single_damaged.png" || bad "single_damaged: not single1's PNG"
# 2c. --text-device: the text encoders in a context of their own (here the same device): the same image
run single_textdev tiny_sd15.safetensors euler_4 1e-3 "--weights-dtype f32 --text-device 0"
has single_textdev "text encoders on "
cmp -s "$work/single1.png" "$work/single_textdev.png" || bad "single_textdev: not single1's PNG"
# 3. the diffusers folder: same architecture and size, so the programs are shared; own weights
run folder1 tiny_sd15 euler_4
hasnt folder1 "compiling"
has folder1 "converting unet weights (first use of this checkpoint)"
has folder1 "_class_name EulerDiscreteScheduler"
run folder2 tiny_sd15 euler_20
hasnt folder2 "converting"
# 4. guidance off: the UNet for batch 1 (one more program, weights shared)
run folder_nocfg tiny_sd15 nocfg_4
has folder_nocfg "compiling unet for 32x32-b1 (first use)"
hasnt folder_nocfg "converting"
run single_nocfg tiny_sd15.safetensors nocfg_4
hasnt single_nocfg "compiling"
# the architecture's own scheduler: SD 1.5's PNDMScheduler (PLMS), as diffusers' from_single_file
# with the published config (oneshot/pndm_4-single.npy, models/make_oneshot_pndm_ref.py)
run single_pndm tiny_sd15.safetensors pndm_4
has single_pndm "scheduler pndm (.*_class_name PNDMScheduler)"
# 5. LoRA, both namings (tests/lora/tiny_peft = PEFT, tiny_kohya = the same factors in kohya
#    naming): diffusers' image after load_lora_weights + fuse_lora(lora_scale=0.8)
#    (oneshot/euler_4_lora-single.npy, models/make_oneshot_lora_refs.py; it differs from the
#    image without the LoRA by 0.19, so the comparison cannot pass without the merge)
run lora_peft tiny_sd15.safetensors euler_4_lora 1e-3 "--weights-dtype f32 --lora ../../lora/tiny_peft.safetensors:0.8"
run lora_kohya tiny_sd15.safetensors euler_4_lora 1e-3 "--weights-dtype f32 --lora ../../lora/tiny_kohya.safetensors:0.8"
# A1111's "Lora hashes" in the PNG's infotext: NAME (the file stem) and the first 12 hex digits of
# the SHA-256 of the bytes after the safetensors header (kohya's addnet hash), computed here
for l in peft kohya; do
  want=$("${PYTHON3:-python3}" -c 'import hashlib, struct, sys
b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]; print(hashlib.sha256(b[8 + n:]).hexdigest()[:12])' \
        "$here/../lora/tiny_$l.safetensors")
  "${PYTHON3:-python3}" "$here/check_infotext.py" "$work/lora_$l.png" "Lora hashes=tiny_$l: $want" \
    "Prompt=$prompt <lora:tiny_$l:0.8>" > /dev/null ||
    bad "lora_$l: infotext has no 'Lora hashes: \"tiny_$l: $want\"' or no '<lora:tiny_$l:0.8>' tag in its prompt"
done
# 6. the default storage, float16 weights (half the memory): its own programs and weights, the
#    image within 5e-3 of diffusers' float32 one (measured 1.2e-3 on euler_4)
run single_f16 tiny_sd15.safetensors euler_4 5e-3 ""
has single_f16 "compiling unet for 32x32-b2 (first use)"
grep -q "3 compiled, 3 converted" "$work/single_f16.log" || bad "single_f16: not 3 compiled, 3 converted"
# nothing half-written left behind
left=$(find "$ONNX2CL_CACHE_DIR" -name '.tmp*' | head -3)
[ -z "$left" ] || bad "temporary files left in the cache: $left"
n=$(find "$ONNX2CL_CACHE_DIR/weights" -name '*.weights' | wc -l)
[ "$n" = 15 ] || bad "expected 15 weights files (3 models x (2 checkpoints + 2 LoRA sets) in float32, x 1 in float16), found $n"
echo "oneshot: $fails failed"
[ "$fails" = 0 ]

#!/bin/bash
# run_emphasis.sh — the proof of `onnx2cl-sd --emphasis` (A1111's prompt syntax, issue 21 item 5) on
# the tiny SD 1.5 folder of tests/pipeline/oneshot: every case of emphasis/cases.txt (weights,
# BREAK, a 2-chunk prompt with a 1-chunk negative and the reverse, "Original", "No norm", "None")
# against the image diffusers makes from A1111's conditioning (emphasis/<case>.npy,
# make_emphasis_refs.py): max |got - ref| <= 1e-3 on the float image (float32 weights storage).
# Clip skip 2 (A1111's hidden_states[-2] + final_layer_norm; diffusers' clip_skip 1) with the
# default text handling and with Original.
# SD 2.x: Original == diffusers without brackets (pad 0 after EOS), --clip-skip refused.
# Also: "None" and "Original" differ on a prompt with brackets; the default (diffusers: text as
# is) equals "None" on a prompt under 75 tokens; the PNG's parameters say "Emphasis: None" for
# None and nothing for Original (A1111's rule); a 2-chunk prompt compiles the UNet as
# 32x32-b2-t154 and the 1-chunk cases keep 32x32-b2; bad input: a weight that is not a number
# (exit 2, its byte offset), --emphasis foo, --clip-skip 0 / 1.5 / 3 (tiny: 2 layers) (exit 2), nothing written.
#
# Usage: run_emphasis.sh ONNX2CL_SD O2C_COMPARE WORK_DIR
set -euo pipefail
sd=$1 compare=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
os=$here/oneshot em=$here/emphasis
export ONNX2CL_CACHE_DIR=$work/cache
rm -rf "$work"
mkdir -p "$work"
fails=0
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
gen() { # gen TAG PROMPT NEGATIVE [FLAGS...]
  local tag=$1 p=$2 n=$3
  shift 3
  (cd "$os" && "$sd" -m tiny_sd15 -p "$p" -n "$n" --steps 4 --cfg 7.5 --seed 42 --width 32 --height 32 \
     --weights-dtype f32 -o "$work/$tag.png" --save-image "$work/$tag.npy" "$@") 2> "$work/$tag.log"
}
check() { # check TAG REF
  if "$compare" "$work/$1.npy" "$em/$2.npy" 1e-3 0 > "$work/$1.cmp" 2>&1; then
    printf '%-16s %s\n' "$1" "$(head -c 140 "$work/$1.cmp")"
  else
    bad "$1: $(head -3 "$work/$1.cmp")"
  fi
}
while IFS=$'\t' read -r name mode prompt negative cs; do
  case $name in '#'*|'') continue ;; esac
  flags=(--quiet)
  [ "$mode" = diffusers ] || flags+=(--emphasis "$mode")
  [ -z "$cs" ] || flags+=(--clip-skip "$cs")
  if gen "$name" "$prompt" "$negative" "${flags[@]}"; then check "$name" "$name"
  else bad "$name: onnx2cl-sd exited non-zero: $(tail -3 "$work/$name.log")"; fi
done < "$em/cases.txt"
# None differs from Original on brackets; the default (diffusers) is None under 75 tokens
if "$compare" "$work/weights.npy" "$em/weights_none.npy" 1e-2 0 > /dev/null 2>&1; then
  bad "weights (Original) equals weights_none (None): the brackets did nothing"; fi
p=$(awk -F'\t' '$1 == "weights_none" {print $3}' "$em/cases.txt")
n=$(awk -F'\t' '$1 == "weights_none" {print $4}' "$em/cases.txt")
if gen default "$p" "$n" --quiet; then check default weights_none; else bad "default: exited non-zero"; fi
# metadata: A1111 writes Emphasis only when it is not Original and a prompt has ( or [
grep -aq "Emphasis: None" "$work/weights_none.png" || bad "weights_none.png: no 'Emphasis: None' in its parameters"
grep -aq "Emphasis: None" "$work/default.png" || bad "default.png: no 'Emphasis: None' in its parameters"
grep -aq "Emphasis: No norm" "$work/weights_nonorm.png" || bad "weights_nonorm.png: no 'Emphasis: No norm'"
! grep -aq "Emphasis" "$work/weights.png" || bad "weights.png (Original): an Emphasis key"
! grep -aq "Emphasis" "$work/break.png" || bad "break.png (Original): an Emphasis key"
p=$(awk -F'\t' '$1 == "clipskip2" {print $3}' "$em/cases.txt")
n=$(awk -F'\t' '$1 == "clipskip2" {print $4}' "$em/cases.txt")
if gen noskip "$p" "$n" --quiet; then
  if "$compare" "$work/noskip.npy" "$em/clipskip2.npy" 1e-2 0 > /dev/null 2>&1; then
    bad "clip skip 2 equals clip skip 1: it did nothing"; fi
else bad "noskip: exited non-zero"; fi
# clip skip: its own text-encoder weights file, the same program, "Clip skip: 2" in the metadata
grep -aq "Clip skip: 2" "$work/clipskip2.png" || bad "clipskip2.png: no 'Clip skip: 2' in its parameters"
! grep -aq "Clip skip" "$work/weights.png" || bad "weights.png: a Clip skip key"
ls "$ONNX2CL_CACHE_DIR"/weights/*/text_encoder-clipskip2.weights > /dev/null 2>&1 || bad "no text_encoder-clipskip2.weights"
[ "$(ls -d "$ONNX2CL_CACHE_DIR"/programs/tiny_sd15/text_encoder/tokens77-b1-* | wc -l)" = 1 ] || bad "more than one text encoder program"
# programs: 77 tokens keep the old name, 154 get -t154
ls -d "$ONNX2CL_CACHE_DIR"/programs/tiny_sd15/unet/32x32-b2-any-* > /dev/null 2>&1 || bad "no 32x32-b2 UNet program"
ls -d "$ONNX2CL_CACHE_DIR"/programs/tiny_sd15/unet/32x32-b2-t154-any-* > /dev/null 2>&1 || bad "no 32x32-b2-t154 UNet program"
# SD 2.x (tests/pipeline/oneshot_sd2): A1111 pads a chunk with 0 after its EOS (OpenCLIP), as
# transformers pads with "!" (0): Original on a prompt without brackets is diffusers' image
os2=$here/oneshot_sd2
p2=$(sed -n 's/^# prompt: //p' "$os2/cases.txt")
n2=$(sed -n 's/^# negative: //p' "$os2/cases.txt")
if (cd "$os2" && "$sd" -m tiny_sd2.safetensors -p "$p2" -n "$n2" --width 32 --height 32 --steps 4 --cfg 7.5 --seed 42 \
      --emphasis Original --quiet -o "$work/sd2.png" --save-image "$work/sd2.npy") 2> "$work/sd2.log"; then
  if "$compare" "$work/sd2.npy" "$os2/default_ddim_4.npy" 1e-3 0 > "$work/sd2.cmp" 2>&1; then
    printf '%-16s %s\n' sd2_original "$(head -c 140 "$work/sd2.cmp")"
  else bad "sd2_original: $(head -3 "$work/sd2.cmp")"; fi
else bad "sd2_original: exited non-zero: $(tail -3 "$work/sd2.log")"; fi
rc=0
(cd "$os2" && "$sd" -m tiny_sd2.safetensors -p "a cat" --width 32 --height 32 --clip-skip 2 --quiet \
   -o "$work/sd2skip.png") 2> "$work/sd2skip.log" || rc=$?
[ "$rc" = 2 ] && grep -q "A1111 ignores it for SD 2.x" "$work/sd2skip.log" || bad "sd2 --clip-skip 2: exit $rc: $(cat "$work/sd2skip.log")"
# bad input: exit 2 with the message, nothing written
refuse() { # refuse TAG PATTERN FLAGS...
  local tag=$1 pat=$2 rc=0
  shift 2
  gen "$tag" "${@:1:1}" "" "${@:2}" || rc=$?
  if [ "$rc" != 2 ]; then bad "$tag: exit $rc, expected 2"; fi
  grep -q -- "$pat" "$work/$tag.log" || bad "$tag: no '$pat' in: $(cat "$work/$tag.log")"
  if [ -e "$work/$tag.png" ] || [ -e "$work/$tag.npy" ]; then bad "$tag: wrote an output"; fi
}
refuse bad_weight "weight '1.2.3' at byte 9 is not a number" "a (photo:1.2.3) of a cat" --emphasis original
refuse bad_weight_neg "negative prompt: prompt: weight" "a cat" --emphasis original -n "(x:.)"
refuse bad_emphasis "not one of Original, No norm, None" "a cat" --emphasis foo
refuse clip_skip0 "expected a number in \[1, 12\]" "a cat" --clip-skip 0
refuse clip_skip_frac "expected an integer in \[1, 12\]" "a cat" --clip-skip 1.5
refuse clip_skip3 "clip-skip 3: the text encoder of tiny_sd15 has 2 layers" "a cat" --clip-skip 3
if [ "$fails" != 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all emphasis cases ok"

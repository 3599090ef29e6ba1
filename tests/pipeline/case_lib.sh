# case_lib.sh — sourced by the run_*.sh proofs of tests/pipeline (bash).
# case_setup CASES_DIR WORK_DIR: WORK_DIR made empty, with its own engine cache
# ($ONNX2CL_CACHE_DIR = WORK_DIR/cache); $prompt and $negative from CASES_DIR/cases.txt's
# "# prompt: " and "# negative: " lines; fails=0. bad MSG...: prints FAIL MSG, counts it.
case_setup() {
  export ONNX2CL_CACHE_DIR=$2/cache
  rm -rf "$2"
  mkdir -p "$2"
  prompt=$(sed -n 's/^# prompt: //p' "$1/cases.txt")
  negative=$(sed -n 's/^# negative: //p' "$1/cases.txt")
  fails=0
}
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
# proof TAG REF WIDTH ARGS... — `$sd ARGS... --weights-dtype f32 --quiet -o $work/out/TAG.png --save-image
# $work/out/TAG.npy` and its float image within 1e-3 of REF (o2c_compare): prints TAG (padded to WIDTH) and
# the comparison, returns 0; otherwise counts a failure with bad (the log's tail) and returns 1.
proof() {
  local tag=$1 ref=$2 w=$3; shift 3
  if "$sd" "$@" --weights-dtype f32 --quiet -o "$work/out/$tag.png" --save-image "$work/out/$tag.npy" \
       2> "$work/out/$tag.log" && "$compare" "$work/out/$tag.npy" "$ref" 1e-3 0 > "$work/out/$tag.cmp" 2>&1; then
    printf "%-${w}s %s\n" "$tag" "$(head -c 140 "$work/out/$tag.cmp")"
    return 0
  fi
  bad "$tag: $(tail -3 "$work/out/$tag.log") $(cat "$work/out/$tag.cmp" 2>/dev/null)"
  return 1
}

# offload_peak TAG BASE_LOG OFFLOAD_LOG — the timings' "device memory peak" of a run with --offload
# (OFFLOAD_LOG) says --offload and is below the peak of the same run with every model loaded (BASE_LOG),
# counted by the runtime (weights + arena of the models on the device at once); else a counted failure.
offload_peak() {
  local b o
  b=$(sed -n 's/^  device memory peak *\([0-9.]*\) MiB.*every model loaded.*/\1/p' "$2")
  o=$(sed -n 's/^  device memory peak *\([0-9.]*\) MiB.*--offload: one stage.s models at a time.*/\1/p' "$3")
  if [ -n "$b" ] && [ -n "$o" ] && awk -v b="$b" -v o="$o" 'BEGIN { exit !(o > 0 && o < b) }'; then
    printf '%-24s device memory peak %s MiB, every model loaded %s MiB\n' "$1" "$o" "$b"
  else
    bad "$1: --offload's device memory peak '$o' MiB is not below every model loaded's '$b' MiB"
  fi
}

# flow_lora_cases DIR FOLDER — SD 3 / Flux LoRA proofs (DIR/lora_cases.txt: case steps cfg guidance weight
# prompt; models/make_flow_lora_refs.py): each case with --lora FILE:W on DIR/FOLDER and as a <lora:NAME:W>
# tag with --lora-dir DIR on DIR/FOLDER.safetensors == diffusers' load_lora_weights + set_adapters image
# (DIR/lora_CASE_image.npy, 1e-3), the infotext keeping the tag and "Lora hashes". LoRA file:
# DIR/lora_transformer (diffusers/PEFT naming), case k DIR/lora_kohya (kohya's). Flux folders
# (tiny_flux_*) get --guidance. Uses $sd, $compare, $work; counts failures with bad.
flow_lora_cases() {
  local d=$1 folder=$2 name steps cfg guidance weight prompt how tag ck ln pr
  local -a lf gf
  while IFS=$'\t' read -r name steps cfg guidance weight prompt; do
    [[ $name == \#* || -z $name ]] && continue
    gf=(); [[ $folder == tiny_flux* ]] && gf=(--guidance "$guidance")
    ln=lora_transformer; [ "$name" = k ] && ln=lora_kohya
    for how in flag tag; do
      tag=lora_${name}_$how
      if [ $how = flag ]; then ck=$d/$folder; lf=(--lora "$d/$ln.safetensors:$weight"); pr=$prompt
      else ck=$d/$folder.safetensors; lf=(--lora-dir "$d"); pr="$prompt <lora:$ln:$weight>"; fi
      if proof "$tag" "$d/lora_${name}_image.npy" 20 -m "$ck" -p "$pr" --steps "$steps" --cfg "$cfg" "${gf[@]}" \
           --seed 42 --width 32 --height 32 "${lf[@]}"; then
        python3 -c 'import sys; from PIL import Image; t = Image.open(sys.argv[1]).text["parameters"]; sys.exit("<lora:" + sys.argv[2] + ":" not in t or "Lora hashes: " not in t)' \
          "$work/out/$tag.png" "$ln" || bad "$tag: no LoRA tag / Lora hashes in the infotext"
      fi
    done
  done < "$d/lora_cases.txt"
}

# flow_i2i_cases DIR PREFIX — SD 3 / Flux img2img proofs (DIR/i2i_cases.txt: case variant steps cfg guidance
# strength prompt negative; models/make_flow_img2img_refs.py): each case on the folder DIR/PREFIX<variant>
# and, where it exists, the single file DIR/PREFIX<variant>.safetensors, from tests/pipeline/img2img/init.png
# == diffusers' Img2Img pipeline image (DIR/i2i_CASE_image.npy, 1e-3), the infotext's "Denoising strength"
# the case's. Flux (PREFIX tiny_flux_*) gets --guidance. Uses $sd, $compare, $work; counts failures with bad.
flow_i2i_cases() {
  local d=$1 prefix=$2 name variant steps cfg guidance strength prompt negative ck tag offload_done=
  local -a cks neg gf
  while IFS=$'\t' read -r name variant steps cfg guidance strength prompt negative; do
    [[ $name == \#* || -z $name ]] && continue
    cks=("$d/$prefix$variant"); [ -e "$d/$prefix$variant.safetensors" ] && cks+=("$d/$prefix$variant.safetensors")
    neg=(); [ -n "$negative" ] && neg=(-n "$negative")
    gf=(); [[ $prefix == tiny_flux* ]] && gf=(--guidance "$guidance")
    for ck in "${cks[@]}" "${cks[0]}--offload"; do # the first case on the folder with --offload too
      local off=()
      if [[ $ck == *--offload ]]; then
        [ -z "$offload_done" ] || continue
        offload_done=1 ck=${ck%--offload} off=(--offload)
      fi
      tag=i2i_${name}_$(basename "$ck")${off:+-offload}
      if proof "$tag" "$d/i2i_${name}_image.npy" 26 -m "$ck" -p "$prompt" "${neg[@]}" --steps "$steps" --cfg "$cfg" \
           "${gf[@]}" --seed 42 --strength "$strength" --init-image "$d/../img2img/init.png" "${off[@]}"; then
        python3 -c 'import re, sys; from PIL import Image; m = re.search(r"Denoising strength: ([0-9.]+)", Image.open(sys.argv[1]).text["parameters"]); sys.exit(not m or float(m.group(1)) != float(sys.argv[2]))' \
          "$work/out/$tag.png" "$strength" || bad "$tag: no Denoising strength $strength in the infotext"
        [ -z "${off[*]}" ] || offload_peak "$tag" "$work/out/${tag%-offload}.log" "$work/out/$tag.log"
      fi
    done
  done < "$d/i2i_cases.txt"
}

# flow_inp_cases DIR PREFIX — SD 3 / Flux inpainting proofs (DIR/inp_cases.txt: case variant steps cfg guidance
# strength mask prompt negative; models/make_flow_inpaint_refs.py): each case on the folder DIR/PREFIX<variant>
# from tests/pipeline/img2img/init.png and that folder's MASK == diffusers' Inpaint pipeline image
# (DIR/inp_CASE_image.npy, 1e-3), the infotext's "Mask blur". Uses $sd, $compare, $work; counts failures.
flow_inp_cases() {
  local d=$1 prefix=$2 name variant steps cfg guidance strength mask prompt negative tag
  local -a neg gf
  while IFS=$'\t' read -r name variant steps cfg guidance strength mask prompt negative; do
    [[ $name == \#* || -z $name ]] && continue
    neg=(); [ -n "$negative" ] && neg=(-n "$negative")
    gf=(); [[ $prefix == tiny_flux* ]] && gf=(--guidance "$guidance")
    tag=inp_${name}_$prefix$variant
    if proof "$tag" "$d/inp_${name}_image.npy" 26 -m "$d/$prefix$variant" -p "$prompt" "${neg[@]}" --steps "$steps" \
         --cfg "$cfg" "${gf[@]}" --seed 42 --strength "$strength" --init-image "$d/../img2img/init.png" \
         --mask "$d/../img2img/$mask"; then
      python3 -c 'import sys; from PIL import Image; sys.exit("Mask blur: 0" not in Image.open(sys.argv[1]).text["parameters"])' \
        "$work/out/$tag.png" || bad "$tag: no Mask blur in the infotext"
    fi
  done < "$d/inp_cases.txt"
}

# flow_overlay_case DIR PREFIX CASE FLAG — inpainting case CASE of DIR/inp_cases.txt with FLAG (--mask-overlay:
# A1111's paste-back of the init image; --only-masked: the area around the mask, here the whole 32x32 image,
# generated and pasted back): the PNG == diffusers' inpaint image composited with the init image through the
# mask (within one 8-bit level). Uses $sd, $work; counts failures with bad.
flow_overlay_case() {
  local d=$1 prefix=$2 want=$3 flag=$4 name variant steps cfg guidance strength mask prompt negative tag
  local -a neg gf
  while IFS=$'\t' read -r name variant steps cfg guidance strength mask prompt negative; do
    [ "$name" = "$want" ] || continue
    neg=(); [ -n "$negative" ] && neg=(-n "$negative")
    gf=(); [[ $prefix == tiny_flux* ]] && gf=(--guidance "$guidance")
    tag=inp_${name}_$prefix$variant${flag}
    if ! "$sd" -m "$d/$prefix$variant" -p "$prompt" "${neg[@]}" --steps "$steps" --cfg "$cfg" "${gf[@]}" --seed 42 \
         --strength "$strength" --init-image "$d/../img2img/init.png" --mask "$d/../img2img/$mask" "$flag" \
         --weights-dtype f32 --quiet -o "$work/out/$tag.png" 2> "$work/out/$tag.log"; then
      bad "$tag: $(tail -3 "$work/out/$tag.log")"; continue
    fi
    if python3 - "$work/out/$tag.png" "$d/inp_${name}_image.npy" "$d/../img2img/init.png" "$d/../img2img/$mask" <<'PY'
import sys
import numpy as np
from PIL import Image
got = np.asarray(Image.open(sys.argv[1]).convert("RGB"), dtype=np.float64)
ref = np.rint(np.clip(np.load(sys.argv[2])[0].transpose(1, 2, 0), 0, 1) * 255)
m = np.asarray(Image.open(sys.argv[4]).convert("L"), dtype=np.float64)[..., None] / 255
want = np.rint(ref * m + np.asarray(Image.open(sys.argv[3]).convert("RGB"), dtype=np.float64) * (1 - m))
lv = int(np.abs(got - want).max())
print(f"{sys.argv[1].rsplit('/', 1)[1]:<40} vs diffusers' image pasted over the init image: max {lv} level(s)")
sys.exit(lv > 1)
PY
    then :; else bad "$tag: not diffusers' image pasted over the init image"; fi
  done < "$d/inp_cases.txt"
}

# expect NAME PATTERN ARGS... — a refusal: `$sd -p x -o $work/out/NAME.png ARGS...` exits non-zero, its
# output holds PATTERN (grep), no PNG is written; "ok NAME" or a counted failure.
expect() { # expect NAME PATTERN ARGS...
  local name=$1 pat=$2; shift 2
  rm -f "$work/out/$name.png"
  if "$sd" -p x -o "$work/out/$name.png" "$@" > "$work/out/$name.err" 2>&1; then bad "$name: exit 0"; return; fi
  grep -q -- "$pat" "$work/out/$name.err" || { bad "$name: $(head -c 300 "$work/out/$name.err")"; return; }
  [ ! -e "$work/out/$name.png" ] || { bad "$name: wrote a PNG"; return; }
  echo "ok $name"
}

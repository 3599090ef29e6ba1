#!/bin/bash
# prompt_tags_bad.sh — refusals of <lora:...> prompt tags (pipeline/sd_lora_tags.c): exit 1 for a
# name not found (naming the name and the folder), two files of that stem (naming both), a LoRA
# folder that does not exist, a pickle of that stem; exit 2 for a name that is a path (../x, a/b,
# an absolute path), a weight that is not a number, no name, a DyLoRA dimension, no folder given,
# tags without -m. Every message names the tag and its character position; nothing is written (no
# PNG, nothing in the cache).
# Usage: prompt_tags_bad.sh ONNX2CL_SD ROOT WORK
set -uo pipefail
sd=$1 root=$2 work=$3
ck=$root/tests/pipeline/oneshot/tiny_sd15.safetensors
L=$root/tests/lora
rm -rf "$work"; mkdir -p "$work/two/a" "$work/two/b" "$work/pk"
touch "$work/two/a/dup.safetensors" "$work/two/b/dup.safetensors" "$work/pk/old.ckpt"
export ONNX2CL_CACHE_DIR=$work/cache
unset ONNX2CL_LORA_DIR
fails=0 n=0
. "$root/tests/pipeline/sd_expect.sh"
expect() { sd_expect "$1" "$2" "$3" -- -p "$4" "${@:5}"; } # expect NAME STATUS PATTERN PROMPT ARGS...
expect missing 1 "<lora:nope:0.8> (character 7): LoRA 'nope': no nope.safetensors in $L" \
  "a cat <lora:nope:0.8>" -m "$ck" --lora-dir "$L"
expect ambiguous 1 "LoRA 'dup' is ambiguous in $work/two: 2 files .*$work/two/[ab]/dup.safetensors and $work/two/[ab]/dup.safetensors" \
  "<lora:dup>" -m "$ck" --lora-dir "$work/two"
expect no_folder 1 "LoRA folder $work/none: no such folder" "<lora:tiny_peft>" -m "$ck" --lora-dir "$work/none"
expect pickle 1 "only $work/pk/old.ckpt .*pickle" "<lora:old:1>" -m "$ck" --lora-dir "$work/pk"
expect dotdot 2 "<lora:../x:1> (character 3): LoRA name '../x' is not a file name" "x <lora:../x:1>" -m "$ck" --lora-dir "$L"
expect slash 2 "LoRA name 'sub/tiny_peft' is not a file name" "<lora:sub/tiny_peft>" -m "$ck" --lora-dir "$L"
expect absolute 2 "LoRA name '$L/tiny_peft' is not a file name" "<lora:$L/tiny_peft>" -m "$ck" --lora-dir "$L"
expect weight 2 "<lora:tiny_peft:0.8x> (character 7): weight '0.8x' is not a number" "a cat <lora:tiny_peft:0.8x>" -m "$ck" --lora-dir "$L"
expect unet_weight 2 "UNet weight 'nan' is not a number" "<lora:tiny_peft:1:nan>" -m "$ck" --lora-dir "$L"
expect no_name 2 "no LoRA name" "<lora::0.5>" -m "$ck" --lora-dir "$L"
expect dyn 2 "DyLoRA dimension" "<lora:tiny_peft:1:1:8>" -m "$ck" --lora-dir "$L"
expect no_dir_given 2 "no LoRA folder: give --lora-dir DIR or set ONNX2CL_LORA_DIR" "<lora:tiny_peft>" -m "$ck"
expect without_m 2 "LoRA tags need -m CHECKPOINT" "<lora:tiny_peft>" --models "$work" --lora-dir "$L"
[ ! -e "$work/cache" ] || [ -z "$(find "$work/cache" -name '*.o2d' -o -name '*.weights')" ] ||
  { echo "FAIL: a refused run left cache entries"; fails=$((fails + 1)); }
echo "$n cases, $fails failed"
[ "$fails" = 0 ]

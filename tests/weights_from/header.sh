#!/bin/bash
# header.sh ONNX2CL DIR WORK
# Every field of a weights file (runtime/onnx2cl_rt.h: header bytes 0-4095, layout trailer)
# is checked: a copy of a real file (DIR/model.onnx's) with one field changed is refused by
# the executable with a message naming the byte or field, expected vs found, exit 1, no crash,
# nothing written. A flipped version byte is "a newer onnx2cl, or a damaged file".
set -uo pipefail
o2c=$1; dir=$2; work=$3
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$work"; mkdir -p "$work/out"
"$o2c" "$dir/model.onnx" -o "$work/m" 2> /dev/null || exit 1
"$work/m" --input "x=$dir/x.npy" --weights "$work/m.weights" --output-dir "$work/out" ||
  { echo "FAIL: the unchanged file is refused"; exit 1; }
rm -f "$work/out"/*
size=$(stat -c %s "$work/m.weights")
payload=$(od -An -t u8 -j 16 -N 8 "$work/m.weights" | tr -d ' ')
t=$((4096 + payload)) # the layout trailer
# case NAME OFFSET BYTES(printf escapes, or "cut N" / "add") REGEX
case_() {
  local name=$1 off=$2 bytes=$3 want=$4 f="$work/$1.weights"
  cp "$work/m.weights" "$f"
  case $bytes in
    cut*) truncate -s $((size - ${bytes#cut })) "$f" ;;
    add) printf 'X' >> "$f" ;;
    *) printf "$bytes" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none ;;
  esac
  "$work/m" --input "x=$dir/x.npy" --weights "$f" --output-dir "$work/out" 2> "$work/$name.err"
  local rc=$?
  if [ $rc -ne 1 ] || ! grep -Eq -- "$want" "$work/$name.err" || [ -n "$(ls -A "$work/out")" ]; then
    bad "$name: exit $rc, $(cat "$work/$name.err")"
  else
    echo "$name: $(cat "$work/$name.err")"
  fi
}
W="weights file .*/"
case_ magic 1 'X' "is not an onnx2cl weights file \(bad magic: bytes 0-7 are 4f 58 43 4c 57 54 53 00, expected \"O2CLWTS\\\\0\"\)"
case_ version 8 '\004' "${W}version.weights has format version 4 \(header bytes 8-11\), this runtime reads version 3 \(a newer onnx2cl, or a damaged file\)"
case_ version_high 11 '\001' "has format version 16777219 \(header bytes 8-11\), this runtime reads version 3 \(a damaged file: no onnx2cl wrote this version\)"
case_ version_zero 8 '\000' "has format version 0 \(header bytes 8-11\), this runtime reads version 3 \(a damaged file"
case_ dtype 12 '\007' "has an unknown weights dtype 7 in header bytes 12-15 \(float32 1 or float16 10; a damaged file\)"
case_ payload 17 '\377' "says it holds [0-9]+ bytes of weights \(header bytes 16-23\), model 'm' expects $payload and the layout hash matches \(a damaged file\)"
case_ checksum 24 '\377' "is corrupt: payload checksum [0-9a-f]{16}, header bytes 24-31 say [0-9a-f]{16}"
case_ model_hash 40 'Z' "is damaged: header byte 40 is 0x5a, the format has a lowercase hex digit of the source model's SHA-256 \(bytes 32-95\)"
case_ layout 100 '\377' "does not fit model 'm': .*every stored tensor and the payload size agree, so header bytes 96-103 \(the layout hash\) are damaged"
case_ padding 104 '\001' "is damaged: header byte 104 is 0x01, the format has zero padding \(bytes 104-4095\)"
case_ padding_end 4095 '\200' "is damaged: header byte 4095 is 0x80, the format has zero padding"
case_ trailer_magic $t 'X' "is damaged: the layout trailer after the payload \(file offset $t, at byte $t\) is wrong: bytes 0-7 are not \"O2CLBLD\\\\0\""
case_ trailer_version $((t + 8)) '\003' "layout trailer .* at byte $((t + 8))\) is wrong: bytes 8-11 \(version\) hold 3, expected 2"
case_ trailer_count $((t + 12)) '\011' "layout trailer .*is wrong: bytes 12-15 \(stored tensors\) hold 9, the model stores [0-9]+"
case_ trailer_names $((t + 16)) '\001' "layout trailer .*is wrong: bytes 16-23 \(names' bytes\) hold 1, the file has [0-9]+ bytes for them"
case_ trailer_hash $((t + 24)) '\377' "layout trailer .* at byte $((t + 24))\) is wrong: the hash of stored tensor 0 differs from the model's"
case_ trailer_cut 0 "cut 1" "layout trailer .*is wrong: bytes 16-23 \(names' bytes\) hold [0-9]+, the file has [0-9]+ bytes for them \(truncated or extended\?\)"
case_ trailer_extended 0 add "layout trailer .*is wrong: bytes 16-23 \(names' bytes\)"
case_ trailer_nul $((size - 1)) 'X' "layout trailer .*is wrong: its names hold [0-9]+ NUL-terminated strings and an unterminated one, expected [0-9]+"
case_ trailer_short 0 "cut $((size - t - 10))" "layout trailer .*is wrong: 10 bytes, shorter than its 24-byte head"
# a short file of another kind (an .npy under 4096 bytes) is "not an onnx2cl weights file", not
# "truncated" (fresh-user trial 2026-12-02); so is a file shorter than the magic
cp "$dir/x.npy" "$work/npy.weights"
printf 'O2C' > "$work/tiny.weights"
for f in npy tiny; do
  "$work/m" --input "x=$dir/x.npy" --weights "$work/$f.weights" --output-dir "$work/out" 2> "$work/$f.err"
  rc=$?
  if [ $rc -ne 1 ] || ! grep -q "is not an onnx2cl weights file" "$work/$f.err" ||
     grep -q truncated "$work/$f.err" || [ -n "$(ls -A "$work/out")" ]; then
    bad "$f: exit $rc, $(cat "$work/$f.err")"
  else
    echo "$f: $(cat "$work/$f.err")"
  fi
done
[ $fail -eq 0 ] && echo ok
exit $fail

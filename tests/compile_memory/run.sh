#!/bin/bash
# run.sh ONNX2CL DIR WORK — compile memory stays near the weights' size (docs/memory.md,
# "Compile memory"): DIR/model.onnx (16 chained linears, each W [1792, 1792] float32 = 12.25 MiB,
# 196 MiB in all, placeholders) filled through DIR/model.namemap (transposes) from a checkpoint
# made here (F32 tensors w0..w15, a sparse file: zeros), compiled to .o2d with --weights-dtype f32
# and f16. The peak resident memory onnx2cl reports (ONNX2CL_MEMTRACE=1: VmHWM after writing the
# weights) must stay within 1.3x the weights' bytes + 64 MiB (before streaming: ~3x, the mapped
# checkpoint, the transposed copies and the packed copies all held until the end). Skipped (77)
# where /proc/self/status is not there (no figure to read).
set -uo pipefail
o2c=$1; dir=$2; work=$3
rm -rf "$work"; mkdir -p "$work"
D=1792; L=16
one=$((D * D * 4)); bytes=$((one * L))
ck="$work/ckpt.safetensors"
hdr="{"
for i in $(seq 0 $((L - 1))); do
  hdr="$hdr\"w$i\":{\"dtype\":\"F32\",\"shape\":[$D,$D],\"data_offsets\":[$((i * one)),$(((i + 1) * one))]}"
  [ $i -lt $((L - 1)) ] && hdr="$hdr,"
done
hdr="$hdr}"
while [ $(( ${#hdr} % 8 )) -ne 0 ]; do hdr="$hdr "; done
n=${#hdr}
printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x\\x00\\x00\\x00\\x00' $((n & 255)) $(((n >> 8) & 255)) \
  $(((n >> 16) & 255)) $(((n >> 24) & 255)))" > "$ck"
printf '%s' "$hdr" >> "$ck"
truncate -s $((8 + n + bytes)) "$ck" || exit 1
fail=0
limit=$(( (bytes * 13 / 10 + (64 << 20)) >> 20 ))
for dt in f32 f16; do
  ONNX2CL_MEMTRACE=1 "$o2c" "$dir/model.onnx" --name-map "$dir/model.namemap" --weights-from "$ck" \
    --weights-dtype $dt -o "$work/m_$dt.o2d" 2> "$work/$dt.err" || { cat "$work/$dt.err"; exit 1; }
  hwm=$(sed -n 's/.*memory after write_weights: VmHWM: \([0-9]*\) MiB.*/\1/p' "$work/$dt.err")
  if [ -z "$hwm" ]; then
    grep -q "memory after" "$work/$dt.err" || { echo "SKIP: no /proc/self/status figures"; exit 77; }
    echo "FAIL: no figure after write_weights"; cat "$work/$dt.err"; exit 1
  fi
  w=$(stat -c %s "$work/m_$dt.weights")
  echo "$dt: peak resident $hwm MiB (limit $limit MiB) for $((bytes >> 20)) MiB of weights; weights file $w bytes"
  [ "$hwm" -le "$limit" ] || { echo "FAIL: $dt: peak $hwm MiB > $limit MiB"; fail=1; }
  want=$([ $dt = f32 ] && echo $bytes || echo $((bytes / 2)))
  [ "$w" -gt "$want" ] && [ "$w" -lt $((want + (1 << 20))) ] || { echo "FAIL: $dt weights file $w bytes"; fail=1; }
  rm -f "$work/m_$dt.o2d" "$work/m_$dt.weights"
done
rm -f "$ck" # (sparse: no disk, but no leftovers)
exit $fail

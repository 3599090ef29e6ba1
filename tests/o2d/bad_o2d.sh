#!/bin/bash
# bad_o2d.sh ONNX2CL ONNX2CL_RUN TEST_O2D WORK   (bad-input)
# Damaged descriptor files and mismatched weights: onnx2cl-run must exit 1 with a message naming
# the file and what is wrong, and write nothing (tests/bad_input/expect_error.sh). Cases: a
# truncated file, a flipped byte (checksum), another format version, another runtime ABI, table
# counts that overflow, a size field that lies, not a descriptor at all, a missing file, and the
# weights file of another model. Also `test_o2d mutate`: 3000 random damaged copies read without
# a crash.
set -uo pipefail
onnx2cl=$1 run=$2 t=$3 work=$4
root=$(cd "$(dirname "$0")/../.." && pwd)
ee=$root/tests/bad_input/expect_error.sh
te=$root/models/tiny/text_encoder vae=$root/models/tiny/vae_decoder
export ONNX2CL_CACHE_DIR=$work/cache
rm -rf "$work/m"; mkdir -p "$work/m"
"$onnx2cl" "$te/model.onnx" -o "$work/m/te.o2d" --shape input_ids=1,77 || exit 1
"$onnx2cl" "$vae/model.onnx" -o "$work/m/vae.o2d" --shape latent_sample=1,4,8,8 || exit 1
good=$work/m/te.o2d
in=(--input "input_ids=$te/inputs/input_ids.npy")
fails=0
case_() { # case_ NAME REGEX FILE [extra args]
  local name=$1 re=$2 file=$3; shift 3
  echo "== $name"
  "$ee" "$work/out_$name" "$re" "$run" "$file" "${in[@]}" --output-dir "$work/out_$name/o" "$@" ||
    fails=$((fails + 1))
}
m=$work/m
"$t" edit "$good" "$m/trunc.o2d" truncate 1000
case_ truncated "trunc\.o2d.*truncated: the header says [0-9]+ bytes, the file has 1000" "$m/trunc.o2d"
"$t" edit "$good" "$m/trunc_hdr.o2d" truncate 40
case_ truncated_header "trunc_hdr\.o2d: truncated: 40 bytes, shorter than its header" "$m/trunc_hdr.o2d"
"$t" edit "$good" "$m/flip.o2d" flip 3000
case_ flipped_byte "flip\.o2d: checksum mismatch \(stored [0-9a-f]{16}, computed [0-9a-f]{16}\): the file is corrupt" "$m/flip.o2d"
"$t" edit "$good" "$m/ver.o2d" set32 8 2
case_ format_version "ver\.o2d: format version 2, this runtime reads version 1" "$m/ver.o2d"
"$t" edit "$good" "$m/abi.o2d" set32 12 6
case_ abi_version "abi\.o2d: written for runtime ABI 6, this runtime is ABI [0-9]+: recompile" "$m/abi.o2d"
"$t" edit "$good" "$m/nbuf.o2d" set32 24 0xffffffff
case_ count_buffers "nbuf\.o2d: byte [0-9]+ \(buffers\): count too large for the file: 4294967295 buffers" "$m/nbuf.o2d"
"$t" edit "$good" "$m/nlaunch.o2d" set32 32 0x7fffffff
case_ count_launches "nlaunch\.o2d: byte [0-9]+ \(launches\): count too large for the file" "$m/nlaunch.o2d"
"$t" edit "$good" "$m/nargs.o2d" set32 28 1
case_ count_args_small "nargs\.o2d: byte [0-9]+ \(.*\): " "$m/nargs.o2d"
"$t" edit "$good" "$m/size.o2d" set32 16 77
# (set32 fixes the size field up again: lie about it by hand after the fix-up)
printf '\x4d\x00\x00\x00' | dd of="$m/size.o2d" bs=1 seek=16 conv=notrunc status=none
case_ size_field "size\.o2d: trailing bytes or a damaged size field: the header says 77 bytes" "$m/size.o2d"
case_ not_o2d "model\.onnx: not an onnx2cl descriptor" "$te/model.onnx"
case_ missing "cannot open descriptor file .*nothere\.o2d" "$m/nothere.o2d"
case_ other_weights "weights" "$good" --weights "$m/vae.weights"
echo "== mutate"
"$t" mutate "$good" 3000 7 || fails=$((fails + 1))
echo "$fails failure(s)"
exit $((fails > 0))

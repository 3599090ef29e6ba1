#!/bin/bash
# info_test.sh ONNX2CL WORK REF_DIR MODEL NAME [--shape ...]
# `onnx2cl MODEL --info` against reference figures computed independently with onnx/onnxruntime
# (tests/cli/make_info_refs.py -> REF_DIR/NAME.ref): parameters (sum of initializer elements),
# FLOPs (2 x MACs of MatMul/Gemm/Conv/ConvTranspose from onnxruntime-measured shapes), node count,
# the op histogram, input and output names. Also: --info writes nothing (run in an empty folder;
# the model's folder unchanged), peak = weights + arena + scratch, weights_bytes is the
# weights_bytes_f32 or _f16 figure of its --weights-dtype and the f16 one lies in [f32/2, f32],
# --info with -o is a usage error; the compiled model's --stats-json and its executable's --help
# give the same memory figures as --info, and a compilation with the other --weights-dtype
# writes exactly the other figure (--stats-json weights_bytes, weights_dtype).
set -uo pipefail
o2c=$1; work=$2; refdir=$3; model=$4; name=$5; shift 5
ref="$refdir/$name.ref"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$work"; mkdir -p "$work/empty"
model=$(realpath "$model")
before=$(ls -la "$(dirname "$model")")
(cd "$work/empty" && "$o2c" "$model" --info "$@") > "$work/info.txt" 2> "$work/info.err"
rc=$?
cat "$work/info.txt"
[ $rc -eq 0 ] || { cat "$work/info.err"; bad "--info exit $rc"; }
[ -z "$(ls -A "$work/empty")" ] || bad "--info wrote files: $(ls -A "$work/empty")"
[ "$before" = "$(ls -la "$(dirname "$model")")" ] || bad "--info changed the model's folder"
refv() { sed -n "s/^$1: //p" "$ref"; }
# "key: N (...)" of the info output (optionally indented, as in --help)
val() { sed -n "s/^ *$1: \([0-9]*\).*/\1/p" "$2"; }
[ "$(val parameters "$work/info.txt")" = "$(refv parameters)" ] ||
  bad "parameters $(val parameters "$work/info.txt"), reference $(refv parameters)"
[ "$(val flops "$work/info.txt")" = "$(refv flops)" ] ||
  bad "flops $(val flops "$work/info.txt"), reference $(refv flops)"
nodes=$(sed -n 's/^ops: \([0-9]*\) nodes.*/\1/p' "$work/info.txt")
[ "$nodes" = "$(refv nodes)" ] || bad "nodes $nodes, reference $(refv nodes)"
hist=$(sed -n '/^ops:/,/^parameters:/p' "$work/info.txt" | sed '1d;$d' |
       awk '{print $1"="$2}' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
refhist=$(refv ops | tr ' ' '\n' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
[ "$hist" = "$refhist" ] || bad "op histogram '$hist', reference '$refhist'"
ins=$(sed -n '/^inputs:/,/^outputs:/p' "$work/info.txt" | sed '1d;$d' | sed 's/^  \([^:]*\):.*/\1/' | tr '\n' ' ' | sed 's/ $//')
outs=$(sed -n '/^outputs:/,/^ops:/p' "$work/info.txt" | sed '1d;$d' | sed 's/^  \([^:]*\):.*/\1/' | tr '\n' ' ' | sed 's/ $//')
[ "$ins" = "$(refv inputs)" ] || bad "inputs '$ins', reference '$(refv inputs)'"
[ "$outs" = "$(refv outputs)" ] || bad "outputs '$outs', reference '$(refv outputs)'"
w=$(val weights_bytes "$work/info.txt"); a=$(val arena_bytes "$work/info.txt")
s=$(val scratch_bytes "$work/info.txt"); p=$(val device_bytes_peak "$work/info.txt")
h=$(val weights_bytes_f16 "$work/info.txt"); f=$(val weights_bytes_f32 "$work/info.txt")
dt=$(sed -n 's/^weights_bytes: .*--weights-dtype \(f[13][62]\)).*/\1/p' "$work/info.txt")
[ -n "$w" ] && [ -n "$a" ] && [ -n "$p" ] && [ "$p" -eq $((w + a + s)) ] && [ "$a" -gt 0 ] ||
  bad "peak $p != weights $w + arena $a + scratch $s"
[ -n "$h" ] && [ -n "$f" ] && [ $((2 * h)) -ge "$f" ] && [ "$h" -le "$f" ] || bad "f16 figure $h outside [$f/2, $f]"
{ [ "$dt" = f32 ] && [ "$w" = "$f" ]; } || { [ "$dt" = f16 ] && [ "$w" = "$h" ]; } ||
  bad "weights_bytes $w (--weights-dtype '$dt') is neither weights_bytes_f32 $f nor _f16 $h"
# --info with an output is refused
"$o2c" "$model" --info -o "$work/empty/x.c" "$@" > /dev/null 2> "$work/usage.err"
rc=$?
[ $rc -eq 2 ] && grep -q -- "--info writes nothing" "$work/usage.err" && [ -z "$(ls -A "$work/empty")" ] ||
  bad "--info -o: exit $rc, $(cat "$work/usage.err")"
# the compiled model agrees: --stats-json and the executable's --help
"$o2c" "$model" -o "$work/model" --stats-json "$work/stats.json" "$@" || bad "compile failed"
for k in weights_bytes arena_bytes device_bytes_peak; do
  j=$(sed -n "s/^ *\"$k\": \([0-9]*\).*/\1/p" "$work/stats.json")
  [ "$j" = "$(val $k "$work/info.txt")" ] || bad "--stats-json $k $j, --info $(val $k "$work/info.txt")"
done
"$work/model" --help > "$work/help.txt" || bad "--help exit $?"
other=f16; [ "$dt" = f16 ] && other=f32
"$o2c" "$model" -o "$work/other.c" --weights-dtype $other --stats-json "$work/other.json" "$@" ||
  bad "compile --weights-dtype $other failed"
j=$(sed -n 's/^ *"weights_bytes": \([0-9]*\).*/\1/p' "$work/other.json")
jd=$(sed -n 's/^ *"weights_dtype": "\(f[13][62]\)".*/\1/p' "$work/other.json")
want=$f; [ $other = f16 ] && want=$h
[ "$j" = "$want" ] && [ "$jd" = $other ] && [ "$(stat -c %s "$work/other.weights")" -gt "$j" ] ||
  bad "--weights-dtype $other: --stats-json weights_bytes $j ($jd), --info said $want"
for k in weights_bytes arena_bytes scratch_bytes device_bytes_peak largest_tensor_bytes; do
  [ "$(val $k "$work/help.txt")" = "$(val $k "$work/info.txt")" ] ||
    bad "--help $k '$(val $k "$work/help.txt")', --info '$(val $k "$work/info.txt")'"
done
[ $fail -eq 0 ] && echo "ok"
exit $fail

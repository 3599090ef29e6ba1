#!/bin/bash
# input_files.sh ONNX2CL SRC WORK   (bad-input.input_files)
# No output of onnx2cl may replace a file the model reads, and no input path may hang a run:
#   - an output path (executable, --weights-only file, --stats-json file) that names the model's
#     external data file, or a --bind file, is refused (exit 2, message naming that file) and
#     the file keeps its bytes (found by a fresh-user trial: the file was overwritten, exit 0);
#   - a FIFO without a writer as the model (onnx2cl) or as an --input of a generated executable
#     is refused at once ("not a regular file"), never waited on (it hung before).
set -u
o2c=$1; src=$2; w=$3
rm -rf "$w"; mkdir -p "$w"
cp "$src/../frontend/models/ext_ok.onnx" "$src/../frontend/models/weights.bin" "$w/"
cp "$src/x_2x3.npy" "$w/x.npy"
cp "$w/weights.bin" "$w/w.weights" # the same model reading w.weights (a --weights-only name)
python3 -c "
import onnx, sys
m = onnx.load(sys.argv[1], load_external_data=False)
m.graph.initializer[0].external_data[0].value = 'w.weights'
onnx.save(m, sys.argv[2])" "$w/ext_ok.onnx" "$w/ext_w.onnx" || { echo "FAIL: python3 onnx"; exit 1; }
sum() { cksum < "$1"; }
ws=$(sum "$w/weights.bin"); xs=$(sum "$w/x.npy"); ww=$(sum "$w/w.weights")
fail=0
expect() { # expect STATUS REGEX CMD...
  local st=$1 re=$2; shift 2
  local err; err=$(timeout 60 "$@" 2>&1 >/dev/null); local got=$?
  echo "exit $got: $err"
  if [ "$got" != "$st" ]; then echo "FAIL: expected exit $st: $*"; fail=1; fi
  if ! grep -Eq -- "$re" <<<"$err"; then echo "FAIL: message does not match /$re/"; fail=1; fi
}
ext="would overwrite the model's external data file '.*weights.bin'"
expect 2 "executable '.*weights.bin' $ext" "$o2c" "$w/ext_ok.onnx" -o "$w/weights.bin"
expect 2 "weights output '.*w.weights' would overwrite the model's external data file '.*w.weights'" \
  "$o2c" "$w/ext_w.onnx" --weights-only -o "$w/w.weights"
expect 2 "--stats-json file '.*weights.bin' $ext" "$o2c" "$w/ext_ok.onnx" -o "$w/m.c" --stats-json "$w/weights.bin"
expect 2 "executable '.*x.npy' would overwrite the --bind file '.*x.npy'" \
  "$o2c" "$src/symbolic.onnx" -o "$w/x.npy" --bind "x=$w/x.npy"
[ "$(sum "$w/weights.bin")" = "$ws" ] || { echo "FAIL: weights.bin changed"; fail=1; }
[ "$(sum "$w/x.npy")" = "$xs" ] || { echo "FAIL: x.npy changed"; fail=1; }
[ "$(sum "$w/w.weights")" = "$ww" ] || { echo "FAIL: w.weights changed"; fail=1; }
mkfifo "$w/fifo"
expect 1 "fifo: not a regular file" "$o2c" "$w/fifo" --info
mkdir -p "$w/exe"
"$o2c" "$src/symbolic.onnx" -o "$w/exe/m" --shape x=2,3 > "$w/build.log" 2>&1 ||
  { cat "$w/build.log"; echo "FAIL: build"; exit 1; }
expect 1 "fifo: not a regular file" "$w/exe/m" --input "x=$w/fifo"
[ $fail = 0 ] && echo ok
exit $fail

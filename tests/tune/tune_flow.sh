#!/bin/bash
# tune_flow.sh ONNX2CL COMPARE MODEL_DIR WORK ATOL RTOL CANDIDATES [onnx2cl flags...]
# `--tune` end to end with the gpu kernel class (docs/tuning.md), in a fresh cache folder:
#   1. MODEL --tune 30 (candidates $CANDIDATES besides the compiled default) with the model's
#      inputs and --output-dir: must print "tune: 1/N ...", write exactly one tuning file with
#      entries for this device, then run with the tuned tiles: outputs within ATOL + RTOL*|ref|
#      of MODEL_DIR/ref (tuning does not change the results);
#   2. a second start with --verbose must say it read that file ("tuning: file PATH", entries
#      "for this device and driver") and match the reference again;
#   3. --tune without inputs (pseudo-random ones: tuning only) exits 0 and rewrites the file;
#   4. a bad $ONNX2CL_TUNE_CANDIDATES set is refused naming it; with the cpu class there is
#      nothing to tune (exit 0, a line says so, the file is left alone).
# Exit 0 when all hold, 1 otherwise (first failure printed).
set -euo pipefail
onnx2cl=$1; compare=$2; dir=$3; work=$4; atol=$5; rtol=$6; cand=$7; shift 7
rm -rf "$work"; mkdir -p "$work/out1" "$work/out2"
export ONNX2CL_CACHE_DIR=$work/cache ONNX2CL_KERNELS=gpu
fail() { echo "FAIL: $*"; exit 1; }
"$onnx2cl" "$dir/model.onnx" -o "$work/model" "$@"
args=()
for f in "$dir"/inputs/*.npy; do n=$(basename "$f" .npy); args+=(--input "$n=$f"); done
compare_out() {
  local st=0
  for f in "$dir"/ref/*.npy; do "$compare" "$1/$(basename "$f")" "$f" "$atol" "$rtol" || st=1; done
  [ $st = 0 ] || fail "outputs of $2 differ from the reference"
}
# 1. tune, then the run with the tuned tiles
ONNX2CL_TUNE_CANDIDATES=$cand "$work/model" "${args[@]}" --tune 30 --output-dir "$work/out1" \
  2> "$work/tune.txt" || { cat "$work/tune.txt"; fail "--tune exited $?"; }
grep '^tune:' "$work/tune.txt"
grep -q '^tune: 1/' "$work/tune.txt" || fail "no 'tune: 1/N' progress line"
files=("$work"/cache/*.tune)
[ ${#files[@]} = 1 ] && [ -f "${files[0]}" ] || fail "expected one tuning file in $work/cache"
tf=${files[0]}
nent=$(grep -c $'^e\t' "$tf" || true)
[ "$nent" -ge 1 ] || fail "no entries in $tf"
grep -q "^tune: wrote $tf ($nent entries)" "$work/tune.txt" || fail "'tune: wrote' line"
compare_out "$work/out1" "the run after --tune"
# 2. second start reads the file
"$work/model" "${args[@]}" --output-dir "$work/out2" --verbose 2> "$work/run.txt" ||
  { cat "$work/run.txt"; fail "second start exited $?"; }
grep '^tuning:' "$work/run.txt"
grep -q "^tuning: file $tf ($nent entries)" "$work/run.txt" || fail "second start did not read $tf"
grep -q "file entry for this device and driver: entry" "$work/run.txt" ||
  fail "no tunable chose a file entry"
if grep -q "warning" "$work/run.txt"; then fail "unexpected warning"; fi
compare_out "$work/out2" "the second start"
# 3. tuning only (no inputs)
ONNX2CL_TUNE_CANDIDATES=$cand "$work/model" --tune=5 2> "$work/tune2.txt" ||
  { cat "$work/tune2.txt"; fail "--tune without inputs exited $?"; }
grep -q "^tune: wrote $tf" "$work/tune2.txt" || fail "--tune without inputs wrote no file"
grep -q "^tune: every shape has an entry for this device and driver in $tf: tuning them all again" \
  "$work/tune2.txt" || grep -q "already tuned for this device and driver" "$work/tune2.txt" ||
  { cat "$work/tune2.txt"; fail "--tune did not say which shapes the file already had"; }
# 3a. a file with an entry for one shape only: that shape is skipped, the others are tuned
{ grep '^tuning: device key:' "$work/run.txt"; grep -m1 '^tuning:   ' "$work/run.txt"; } > "$work/one_key.txt"
python3 "$(dirname "$0")/tunefile.py" write "$tf" model "$dir/model.onnx" "$work/one_key.txt" "$cand"
ONNX2CL_TUNE_CANDIDATES=$cand "$work/model" --tune=30 2> "$work/tune_skip.txt" ||
  { cat "$work/tune_skip.txt"; fail "--tune with a partial file exited $?"; }
grep -q "^tune: 1 of $(grep -o '^tuning:   [^ ]*' "$work/run.txt" | sort -u | wc -l | tr -d ' ') shapes already tuned for this device and driver in $tf are skipped" "$work/tune_skip.txt" ||
  { cat "$work/tune_skip.txt"; fail "the shape the file has was not skipped"; }
# 3b. a candidate the driver refuses to build (simulated: $ONNX2CL_FAIL_BUILD_IF fails any build
#     whose source holds its kernel name) is left out after one build per candidate, the other
#     is tuned and the file written
tag=$(echo "$cand" | awk -F, '{printf "_%sx%sx%s_r%sx%s", $1, $2, $3, $4, $5}')
ONNX2CL_FAIL_BUILD_IF=$tag ONNX2CL_TUNE_CANDIDATES="$cand;32,32,16,4,4" "$work/model" --tune=5 \
  2> "$work/tune3.txt" || { cat "$work/tune3.txt"; fail "--tune with a candidate that does not build exited $?"; }
grep -q "the program with every candidate did not build" "$work/tune3.txt" ||
  { cat "$work/tune3.txt"; fail "no line saying the candidates' program did not build"; }
grep -q "$(echo "$cand" | awk -F, '{printf "%sx%sx%s r%sx%s", $1, $2, $3, $4, $5}') left out: it does not build" "$work/tune3.txt" ||
  { cat "$work/tune3.txt"; fail "the candidate that does not build is not named"; }
if grep -q "32x32x16 r4x4 left out" "$work/tune3.txt"; then fail "a candidate that builds was left out"; fi
grep -q "^tune: wrote $tf" "$work/tune3.txt" || { cat "$work/tune3.txt"; fail "no file written"; }
# 3c. when the compiled default itself does not build, --tune fails naming the build, without
#     blaming the candidates
if ONNX2CL_FAIL_BUILD_IF=_64x64x16_r4x4 ONNX2CL_TUNE_CANDIDATES="$cand" "$work/model" --tune=5 \
  2> "$work/tune4.txt"; then fail "--tune succeeded although the default does not build"; fi
grep -q "clBuildProgram" "$work/tune4.txt" || { cat "$work/tune4.txt"; fail "no build error reported"; }
if grep -q "left out" "$work/tune4.txt"; then cat "$work/tune4.txt"; fail "a candidate was blamed"; fi
# 4. a bad candidate list is refused naming the set (before any build); the cpu class has
#    nothing to tune: exit 0, a line saying so, the file untouched
sum0=$(cksum < "$tf")
if ONNX2CL_TUNE_CANDIDATES="32,32,32,2,2;40,64,16,4,4" "$work/model" --tune 5 2> "$work/bad.txt"; then
  fail "a bad \$ONNX2CL_TUNE_CANDIDATES was accepted"
fi
grep -q "ONNX2CL_TUNE_CANDIDATES=.*at '40,64,16,4,4': TK % 4, TN % 16 and TM % 16 must be 0" "$work/bad.txt" ||
  { cat "$work/bad.txt"; fail "no message naming the bad candidate"; }
ONNX2CL_KERNELS=cpu "$work/model" --tune 5 2> "$work/cpu.txt" || { cat "$work/cpu.txt"; fail "--tune on the cpu class failed"; }
grep -q "^tune: model 'model' has no tunable kernels in the cpu class" "$work/cpu.txt" || fail "cpu class: no 'nothing to tune' line"
[ "$(cksum < "$tf")" = "$sum0" ] || fail "cpu class: the tuning file changed"
echo "ok: --tune wrote $tf ($nent entries); the second start read it; outputs match"

#!/bin/bash
# tune_files.sh ONNX2CL COMPARE MODEL_DIR WORK ATOL RTOL TILES [onnx2cl flags...]
# Tuning files made by tests/tune/tunefile.py for the model's tunable shapes on this device
# (gpu kernel class, fresh cache folder); every run's outputs must match MODEL_DIR/ref within
# ATOL + RTOL*|ref|:
#   - no file: --verbose says "no tuning file";
#   - a corrupt (byte flipped), truncated (no end line), foreign-version (99), other-model,
#     binary (a NUL byte) or empty file, or a directory in its place: exactly one warning naming
#     the file and the reason, and no entry is used;
#   - entries with out-of-range tiles (40,64,16,4,4: TM % 16 != 0): one warning per entry,
#     naming the file, the line and the rule; none used;
#   - entries forcing the valid, non-default TILES: used ("file entry for this device"), and
#     every GEMM / conv / MatMul kernel that runs is a TILES instance (the runtime-chosen tiles
#     really change the kernels); the same entries for this device with another driver, and
#     for another device of the same vendor, are used at those lookup levels.
set -euo pipefail
onnx2cl=$1; compare=$2; dir=$3; work=$4; atol=$5; rtol=$6; tiles=$7; shift 7
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"; mkdir -p "$work/cache" # the tuning files are written by hand into it
export ONNX2CL_CACHE_DIR=$work/cache ONNX2CL_KERNELS=gpu
fail() { echo "FAIL: $*"; exit 1; }
"$onnx2cl" "$dir/model.onnx" -o "$work/model" "$@"
args=()
for f in "$dir"/inputs/*.npy; do n=$(basename "$f" .npy); args+=(--input "$n=$f"); done
run() { # run NAME: verbose run, stderr in $work/NAME.txt, outputs in $work/out_NAME, checked
  rm -rf "$work/out_$1"; mkdir -p "$work/out_$1"
  "$work/model" "${args[@]}" --output-dir "$work/out_$1" --verbose 2> "$work/$1.txt" ||
    { cat "$work/$1.txt"; fail "$1: the run failed"; }
  local st=0
  for f in "$dir"/ref/*.npy; do "$compare" "$work/out_$1/$(basename "$f")" "$f" "$atol" "$rtol" > /dev/null || st=1; done
  [ $st = 0 ] || fail "$1: outputs differ from the reference"
}
run none
tf=$(sed -n 's/^tuning: no tuning file (looked for \(.*\))$/\1/p' "$work/none.txt")
[ -n "$tf" ] || fail "no 'tuning: no tuning file (looked for PATH)' line"
nkeys=$(grep -c '^tuning:   ' "$work/none.txt" || true)
[ "$nkeys" -ge 1 ] || fail "the model has no tunable shape"
for how in corrupt truncate version model nul empty; do
  python3 "$here/tunefile.py" write "$tf" model "$dir/model.onnx" "$work/none.txt" "$tiles"
  python3 "$here/tunefile.py" damage "$tf" "$how"
  run "$how"
  case $how in
    corrupt) why="corrupt (checksum";; truncate) why="truncated";;
    version) why="format version '99'";; model) why="written for model 'model'";;
    nul) why="holds a NUL byte";; empty) why="truncated (does not end with a complete line)";;
  esac
  nw=$(grep -c "warning" "$work/$how.txt" || true)
  grep -qF "onnx2cl: warning: ignoring tuning file $tf: $why" "$work/$how.txt" && [ "$nw" = 1 ] ||
    { grep warning "$work/$how.txt" || true; fail "$how file: expected one warning '... $tf: $why'"; }
  if grep -q "file entry" "$work/$how.txt"; then fail "$how file: an entry was used"; fi
  echo "ok: $how file ignored with one warning: $(grep warning "$work/$how.txt")"
done
rm -f "$tf"; mkdir "$tf"
run dir
grep -qF "onnx2cl: warning: ignoring tuning file $tf: not a regular file" "$work/dir.txt" &&
  [ "$(grep -c warning "$work/dir.txt")" = 1 ] || fail "a directory in the file's place: expected one warning"
rmdir "$tf"
echo "ok: a directory in the file's place ignored with one warning"
python3 "$here/tunefile.py" write "$tf" model "$dir/model.onnx" "$work/none.txt" 40,64,16,4,4
run range
nw=$(grep -c "^onnx2cl: warning: tuning file $tf line [0-9]*: ignoring tiles 40x64x16 r4x4 for .*: TK % 4, TN % 16 and TM % 16 must be 0" "$work/range.txt" || true)
[ "$nw" = "$nkeys" ] || { grep warning "$work/range.txt" || true; fail "range: expected $nkeys warnings (one per entry)"; }
if grep -q "file entry" "$work/range.txt"; then fail "range: an out-of-range entry was used"; fi
echo "ok: $nw out-of-range entries ignored, one warning each"
python3 "$here/tunefile.py" write "$tf" model "$dir/model.onnx" "$work/none.txt" "$tiles"
run forced
IFS=, read -r tm tn tk rm rn <<< "$tiles"
want="${tm}x${tn}x${tk}_r${rm}x${rn}"
used=$(grep -c "file entry for this device and driver: entry" "$work/forced.txt" || true)
[ "$used" = "$nkeys" ] || fail "forced: $used of $nkeys shapes took the file's entry"
nk=$(grep -c "^tuning:   .* kernel gg_[a-z]*_${want}" "$work/forced.txt" || true)
[ "$nk" = "$nkeys" ] || fail "forced: $nk of $nkeys shapes run a ${want} instance"
ran=$(grep -o 'gg_[a-z]*_[0-9]*x[0-9]*x[0-9]*_r[0-9]*x[0-9]*[a-z0-9_]*' <(grep "gpu variant:" "$work/forced.txt") | sort -u | tr '\n' ' ')
defran=$(grep -o 'gg_[a-z]*_[0-9]*x[0-9]*x[0-9]*_r[0-9]*x[0-9]*[a-z0-9_]*' <(grep "gpu variant:" "$work/none.txt") | sort -u | tr '\n' ' ')
for k in $ran; do
  case $k in *_${want}*) ;; *) fail "forced: kernel $k runs (not a ${want} instance)";; esac
done
[ -n "$ran" ] || fail "forced: no tunable kernel in the 'gpu variant:' lines"
if grep -q "warning" "$work/forced.txt"; then fail "forced: unexpected warning"; fi
echo "ok: forced tiles $tiles used (kernels: $ran; default run: $defran); outputs match"
# an entry this driver cannot build (simulated: $ONNX2CL_FAIL_BUILD_IF fails a build whose source
# holds the forced instance) never stops a start: one warning, the compiled defaults, outputs ok
ONNX2CL_FAIL_BUILD_IF="_${want}" run nobuild
grep -qF "onnx2cl: warning: model 'model': the program with the tiles of the tuning file's entries in $tf did not build" "$work/nobuild.txt" ||
  { grep warning "$work/nobuild.txt" || true; fail "nobuild: no warning naming the tuning file"; }
if grep -q "kernel gg_[a-z]*_${want}" "$work/nobuild.txt"; then fail "nobuild: a ${want} instance still runs"; fi
echo "ok: entries that do not build are dropped with one warning; outputs match"
# the lower levels of the lookup: this device with another driver, another device of the vendor
for lvl in driver vendor; do
  python3 "$here/tunefile.py" write "$tf" model "$dir/model.onnx" "$work/none.txt" "$tiles" $lvl
  run "lvl_$lvl"
  case $lvl in driver) what="file entry for this device, another driver";;
               vendor) what="file entry for another device of this vendor";; esac
  n=$(grep -c "^tuning:   .* kernel gg_[a-z]*_${want}.*" "$work/lvl_$lvl.txt" || true)
  u=$(grep -c "($what: entry" "$work/lvl_$lvl.txt" || true)
  [ "$n" = "$nkeys" ] && [ "$u" = "$nkeys" ] || fail "level $lvl: $u/$n of $nkeys shapes took the entry"
  echo "ok: entries of level '$lvl' used ($what)"
done

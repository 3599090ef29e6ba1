#!/bin/bash
# stamp.sh ONNX2CL COMPARE DIR WORK — "verified before" stamps of weights files (runtime/model.c,
# weights_stamp): the payload checksum is checked once per file version, never trusted for a
# changed file. DIR/grouped: model, input and onnxruntime reference (make_grouped.py).
#  1. a file changed less than 2 s ago is checked but not stamped (coarse file clocks);
#  2. once settled it is checked and stamped; 3. then the check is skipped (--verbose says so);
#  4. ONNX2CL_WEIGHTS_VERIFY=always checks anyway; 5. one payload byte changed in place (same
#  size and inode) is refused as corrupt; 6. restored, it loads and is checked again;
#  7. a stamp file with other content is not trusted; 8. a FIFO at the stamp path does not hang
#  the start; 9. files on tmpfs (/dev/shm) are never stamped (mmap writes keep their times).
set -uo pipefail
o2c=$1; cmp=$2; d=$3; work=$4
fail=0
bad() { echo "FAIL: $*"; cat "$work/err" 2>/dev/null; fail=1; }
rm -rf "$work"; mkdir -p "$work/cache"
export ONNX2CL_CACHE_DIR="$work/cache"
"$o2c" "$d/grouped/model.onnx" -o "$work/m" || exit 1
run() { "$work/m" --input x="$d/grouped/inputs/x.npy" --output y="$work/y.npy" --verbose 2> "$work/err"; }
check() { "$cmp" "$work/y.npy" "$d/grouped/ref/y.npy" 1e-4 1e-3 > /dev/null || bad "$1: output differs from the reference"; }
stamps() { find "$work/cache" -name 'weights-*.verified' | wc -l; }
skipped() { grep -q 'checksum checked at an earlier start' "$work/err"; }
flip() { python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(4096 + 100); b = f.read(1); f.seek(4096 + 100); f.write(bytes([b[0] ^ 1]))' "$work/m.weights"; }

run || bad "run 1"; check "run 1"
[ "$(stamps)" = 0 ] || bad "1: a file written just now was stamped"
sleep 2.2
run || bad "run 2"; check "run 2"; skipped && bad "2: checksum skipped without a stamp"
[ "$(stamps)" = 1 ] || bad "2: $(stamps) stamps, want 1"
run || bad "run 3"; check "run 3"; skipped || bad "3: the stamp was not used"
ONNX2CL_WEIGHTS_VERIFY=always run || bad "run 4"; check "run 4"
skipped && bad "4: ONNX2CL_WEIGHTS_VERIFY=always skipped the checksum"
flip
run; rc=$?
{ [ $rc = 1 ] && grep -q 'is corrupt: payload checksum' "$work/err"; } || bad "5: a changed payload byte was not refused (exit $rc)"
flip
run || bad "run 6"; check "run 6"; skipped && bad "6: checksum skipped for a changed file"
sleep 2.2
run || bad "run 7a"; skipped && bad "7a: checksum skipped for a changed file"
for s in "$work/cache"/weights-*.verified; do printf 'onnx2cl weights verified 1: garbage\n' > "$s"; done
run || bad "run 7"; check "run 7"; skipped && bad "7: a stamp with other content was trusted"
# 8. a FIFO at the stamp path does not hang the start (checked, stamp replaced)
for s in "$work/cache"/weights-*.verified; do rm -f "$s"; mkfifo "$s"; done
timeout 120 "$work/m" --input x="$d/grouped/inputs/x.npy" --output y="$work/y.npy" --verbose 2> "$work/err" ||
  bad "8: a FIFO at the stamp path: the run failed or hung"
check "run 8"; skipped && bad "8: checksum skipped with a FIFO as the stamp"
# 9. tmpfs does not update file times for writes through a shared mapping: no stamps there
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ -w /dev/shm ]; then
  shm=$(mktemp /dev/shm/o2c_stamp.XXXXXX); cp "$work/m.weights" "$shm"; sleep 2.2
  for i in 1 2; do
    "$work/m" --weights "$shm" --input x="$d/grouped/inputs/x.npy" --output y="$work/y.npy" --verbose 2> "$work/err" ||
      bad "9: run $i on tmpfs"
    skipped && bad "9: checksum skipped for a file on tmpfs"
  done
  rm -f "$shm"
else
  echo "9: /dev/shm is not a writable tmpfs here: tmpfs case not run"
fi
[ $fail -eq 0 ] && echo ok
exit $fail

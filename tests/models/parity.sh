#!/bin/bash
# parity.sh ONNX2CL TS_DIR DYNAMO_DIR WORK_DIR [onnx2cl flags...]
# Exporter parity (issue 11 item 2): compiles the TorchScript export (TS_DIR/model.onnx) and the
# dynamo export of the same module (DYNAMO_DIR/model.onnx) to C with --stats (no C compiler, no
# OpenCL) and asserts that the dynamo build needs at most 1.05x the kernel launches (cpu and gpu
# class each) and 1.05x the activation arena of the TorchScript build, and that the attention and
# gnorm fusions fire the same number of times. Prints both builds' figures either way.
# Assumes: --stats prints "kernel launches per inference: N (cpu kernels), M (gpu kernels)",
# "arena: B bytes ..." and "fusion NAME applied N, ..." lines (driver/onnx2cl.c).
set -euo pipefail
onnx2cl=$1; ts=$2; dyn=$3; work=$4; shift 4
rm -rf "$work"; mkdir -p "$work"
"$onnx2cl" "$ts/model.onnx" -o "$work/ts.c" --stats "$@" 2> "$work/ts.txt"
"$onnx2cl" "$dyn/model.onnx" -o "$work/dyn.c" --stats "$@" 2> "$work/dyn.txt"

# figure FILE WHAT -> the number, or exit 1 naming what is missing
figure() {
  local v
  case $2 in
    cpu) v=$(sed -nE 's/^kernel launches per inference: ([0-9]+) \(cpu kernels\).*/\1/p' "$1") ;;
    gpu) v=$(sed -nE 's/^kernel launches per inference: .*, ([0-9]+) \(gpu kernels\).*/\1/p' "$1") ;;
    arena) v=$(sed -nE 's/^arena: ([0-9]+) bytes.*/\1/p' "$1") ;;
    *) v=$(sed -nE "s/^fusion $2 +applied +([0-9]+),.*/\\1/p" "$1") ;;
  esac
  if [ -z "$v" ]; then echo "FAIL: no '$2' figure in $1 (--stats output changed?)" >&2; exit 1; fi
  echo "$v"
}

status=0
for what in cpu gpu arena attention gnorm; do
  a=$(figure "$work/ts.txt" $what); b=$(figure "$work/dyn.txt" $what)
  case $what in
    attention|gnorm) ok=$([ "$a" -eq "$b" ] && echo 1 || echo 0); rule="equal" ;;
    *) ok=$([ $((b * 100)) -le $((a * 105)) ] && echo 1 || echo 0); rule="dynamo <= 1.05 x TorchScript" ;;
  esac
  printf '%-9s TorchScript %10s  dynamo %10s  (%s) %s\n' "$what" "$a" "$b" "$rule" \
    "$([ $ok = 1 ] && echo ok || echo FAIL)"
  [ $ok = 1 ] || status=1
done
exit $status

#!/bin/bash
# run_case.sh ONNX2CL COMPARE CASE_DIR WORK_DIR ATOL RTOL [onnx2cl flags...]
# Compiles CASE_DIR/model.onnx once, then:
#   - runs it on CASE_DIR/inputs/*.npy (the branches that fit) and compares every output with
#     CASE_DIR/ref/<output>.npy within ATOL + RTOL*|ref| (onnxruntime references);
#   - for each CASE_DIR/fail/<k>/ (inputs that select a branch that does not fit the bound shapes)
#     runs it on fail/<k>/inputs/*.npy and asserts exit status 1, an error matching the extended
#     regex in fail/<k>/message.txt, and no output file written.
set -euo pipefail
onnx2cl=$1; compare=$2; dir=$3; work=$4; atol=$5; rtol=$6; shift 6
rm -rf "$work"; mkdir -p "$work/out"
"$onnx2cl" "$dir/model.onnx" -o "$work/model" "$@"
inputs() { for f in "$1"/inputs/*.npy; do echo "--input"; echo "$(basename "$f" .npy)=$f"; done; }
mapfile -t args < <(inputs "$dir")
"$work/model" "${args[@]}" --output-dir "$work/out"
status=0
for f in "$dir"/ref/*.npy; do
  "$compare" "$work/out/$(basename "$f")" "$f" "$atol" "$rtol" || status=1
done
for fd in "$dir"/fail/*/; do
  k=$(basename "$fd"); out="$work/fail_$k"; mkdir -p "$out"
  mapfile -t args < <(inputs "$fd")
  set +e; err=$("$work/model" "${args[@]}" --output-dir "$out" 2>&1 >/dev/null); st=$?; set -e
  re=$(cat "$fd/message.txt")
  echo "fail/$k: exit $st: $(grep -v 'warnings generated\|program built' <<<"$err")"
  if [ $st -ne 1 ]; then echo "FAIL: fail/$k: expected exit status 1, got $st"; status=1; fi
  if ! grep -Eq -- "$re" <<<"$err"; then echo "FAIL: fail/$k: message does not match /$re/"; status=1; fi
  left=$(ls -A "$out")
  if [ -n "$left" ]; then echo "FAIL: fail/$k: output files written: $left"; status=1; fi
done
[ $status -eq 0 ] && echo "ok"
exit $status

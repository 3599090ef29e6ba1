#!/bin/bash
# run_case.sh ONNX2CL COMPARE CASE_DIR WORK_DIR ATOL RTOL [onnx2cl flags...]
# tests/models/run_model.sh on CASE_DIR (model.onnx, inputs/*.npy — only those: an input the
# flags remove, e.g. by --bind, must not be asked for — and ref/<output>.npy within
# ATOL + RTOL*|ref|), with the token @CASE@ in a flag replaced by CASE_DIR. With ABSENT_OP=OP in
# the environment, first asserts that no OP node is left in the IR after dce (e.g. Where: every
# If folded).
set -euo pipefail
onnx2cl=$1; compare=$2; dir=$3; work=$4; atol=$5; rtol=$6; shift 6
flags=()
for f in "$@"; do flags+=("${f//@CASE@/$dir}"); done
if [ -n "${ABSENT_OP:-}" ]; then
  mkdir -p "$work.dump"
  "$onnx2cl" "$dir/model.onnx" -o "$work.dump/dump.c" --dump-after=dce "${flags[@]}" > "$work.dump/dump.txt"
  if grep -q "= ${ABSENT_OP}(" "$work.dump/dump.txt"; then
    echo "FAIL: a ${ABSENT_OP} node is left after dce:"; cat "$work.dump/dump.txt"; exit 1
  fi
  echo "ok: no ${ABSENT_OP} node after dce"
fi
exec "$(dirname "$0")/../models/run_model.sh" "$onnx2cl" "$compare" "$dir" "$work" "$atol" "$rtol" "${flags[@]}"

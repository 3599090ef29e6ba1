#!/bin/bash
# run_split.sh ONNX2CL COMPARE MODEL_DIR WORK_DIR ATOL RTOL "LIMIT[:split or :fail=TEXT]|LIMIT...|..." [onnx2cl flags...]
# Allocation splitting on a real model: compiles MODEL_DIR/model.onnx once, then runs it once per
# LIMIT (specs separated by |) with ONNX2CL_MAX_ALLOC=LIMIT and compares every output with MODEL_DIR/ref/*.npy within
# ATOL + RTOL*|ref| (the same references and tolerances as run_model.sh).
#   LIMIT:split      the run must also have split the weights or the arena into more than one
#                    device allocation (checked on the --verbose "device memory" line)
#   LIMIT:fail=TEXT  the limit is below one of the model's tensors: the run must fail with exit
#                    status 1, a message containing TEXT (the tensor's name and size), write no
#                    output, and not crash
set -euo pipefail
onnx2cl=$1; compare=$2; dir=$3; work=$4; atol=$5; rtol=$6; limits=$7; shift 7
rm -rf "$work"; mkdir -p "$work"
"$onnx2cl" "$dir/model.onnx" -o "$work/model" "$@"
args=()
for f in "$dir"/inputs/*.npy; do n=$(basename "$f" .npy); args+=(--input "$n=$f"); done
status=0
IFS="|" read -ra specs <<< "$limits"
for spec in "${specs[@]}"; do
  limit=${spec%%:*}; mode=; [ "$spec" != "$limit" ] && mode=${spec#*:}
  out="$work/out_$limit"; mkdir -p "$out"
  set +e
  ONNX2CL_MAX_ALLOC=$limit "$work/model" "${args[@]}" --output-dir "$out" --verbose 2> "$work/stderr_$limit"
  rc=$?
  set -e
  if [[ "$mode" == fail=* ]]; then
    want=${mode#fail=}
    if [ $rc -ne 1 ] || ! grep -qF -- "$want" "$work/stderr_$limit" || [ -n "$(ls -A "$out")" ]; then
      echo "FAIL: ONNX2CL_MAX_ALLOC=$limit: want exit 1 with '$want' and no output, got exit $rc:"
      cat "$work/stderr_$limit"; status=1
    else
      echo "ONNX2CL_MAX_ALLOC=$limit: refused as expected: $(grep -F -- "$want" "$work/stderr_$limit")"
    fi
    continue
  fi
  if [ $rc -ne 0 ]; then
    echo "FAIL: ONNX2CL_MAX_ALLOC=$limit: exit $rc"; cat "$work/stderr_$limit"; status=1; continue
  fi
  echo "ONNX2CL_MAX_ALLOC=$limit: $(grep "device memory" "$work/stderr_$limit")"
  if [ "$mode" = split ] && ! grep -Eq "in ([2-9]|[1-9][0-9]+) allocation" "$work/stderr_$limit"; then
    echo "FAIL: ONNX2CL_MAX_ALLOC=$limit split nothing"; status=1
  fi
  for f in "$dir"/ref/*.npy; do
    "$compare" "$out/$(basename "$f")" "$f" "$atol" "$rtol" || status=1
  done
done
exit $status

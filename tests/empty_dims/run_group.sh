#!/bin/bash
# run_group.sh ONNX2CL ONNX2CL_RUN COMPARE CASES_DIR WORK_DIR PREFIXES — the empty-dims net (issue 19):
# compiles every case CASES_DIR/PREFIX* for each PREFIX of the space-separated list PREFIXES
# (a prefix may hold glob characters: "gemm.[lb]"; make_models.py: model.onnx, inputs/*.npy, ref/*.npy, tol) and runs
# it (as a descriptor file, onnx2cl -o X.o2d + onnx2cl-run: no C compile per case; the .o2d is the
# generated C's descriptor byte for byte, tests/o2d) with --kernels cpu and --kernels gpu, comparing every output with the onnxruntime reference
# within the case's tol (ATOL RTOL: |d| <= ATOL + RTOL*|ref|; dtype and shape must match).
# One line per case and class; runs every case before failing (exit 1 names the failed ones).
set -uo pipefail
onnx2cl=$1; runner=$2; compare=$3; cases=$4; work=$5; group=$6
shopt -s nullglob
rm -rf "$work"; mkdir -p "$work"
failed=(); n=0
dirs=()
for p in $group; do
  got=("$cases"/$p*/)
  [ ${#got[@]} -gt 0 ] || { echo "no case matches $cases/$p*"; exit 1; }
  dirs+=("${got[@]}")
done
for dir in "${dirs[@]}"; do
  dir=${dir%/}; name=$(basename "$dir"); w="$work/$name"; mkdir -p "$w"
  n=$((n + 1))
  read -r atol rtol < "$dir/tol"
  if ! "$onnx2cl" "$dir/model.onnx" -o "$w/model.o2d" > "$w/compile.log" 2>&1; then
    echo "FAIL $name: compile (onnx2cl exit $?)"; sed 's/^/    /' "$w/compile.log" | tail -5; failed+=("$name:compile"); continue
  fi
  args=()
  for f in "$dir"/inputs/*.npy; do [ -e "$f" ] && args+=(--input "$(basename "$f" .npy)=$f"); done
  for k in cpu gpu; do
    if ! "$runner" "$w/model.o2d" "${args[@]}" --output-dir "$w/out_$k" --kernels "$k" > "$w/run_$k.log" 2>&1; then
      echo "FAIL $name --kernels $k: run"; sed 's/^/    /' "$w/run_$k.log" | tail -5
      failed+=("$name:$k"); continue
    fi
    ok=1
    for r in "$dir"/ref/*.npy; do
      if ! msg=$("$compare" "$w/out_$k/$(basename "$r")" "$r" "$atol" "$rtol" 2>&1); then
        echo "FAIL $name --kernels $k: $(basename "$r" .npy): $msg"; ok=0
      fi
    done
    if [ $ok = 1 ]; then echo "ok   $name --kernels $k"; else failed+=("$name:$k"); fi
  done
done
echo "group $group: $n cases x 2 kernel classes, ${#failed[@]} failed"
[ ${#failed[@]} = 0 ] || { printf '  %s\n' "${failed[@]}"; exit 1; }

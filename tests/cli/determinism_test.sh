#!/bin/bash
# determinism_test.sh ONNX2CL WORK MODEL FLAGS... — compiles MODEL twice (different output
# folders, same name) and requires byte-identical C, header and weights files.
set -euo pipefail
o2c=$1; work=$2; model=$3; shift 3
rm -rf "$work"; mkdir -p "$work/a" "$work/b"
(cd "$work/a" && "$o2c" "$model" -o m.c "$@")
(cd "$work/b" && "$o2c" "$model" -o m.c "$@")
cmp "$work/a/m.c" "$work/b/m.c"
cmp "$work/a/m.h" "$work/b/m.h"
cmp "$work/a/m.weights" "$work/b/m.weights"
echo "identical: $(wc -c < "$work/a/m.c") bytes of C, $(wc -c < "$work/a/m.weights") bytes of weights"

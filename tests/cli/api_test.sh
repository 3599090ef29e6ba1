#!/bin/bash
# api_test.sh ONNX2CL CC RT_INCLUDE RT_LIB WORK MODEL — generates MODEL as a library (--no-main,
# --name relu), compiles it with api_main.c (which includes the generated relu.h) against the
# runtime with -Wall -Wextra -Werror, runs it.
set -euo pipefail
o2c=$1; cc=$2; inc=$3; lib=$4; work=$5; model=$6
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"; mkdir -p "$work"
"$o2c" "$model" -o "$work/relu.c" --name relu --no-main --shape x=2,3
"$cc" -std=c11 -O1 -Wall -Wextra -Werror -I"$inc" -I"$work" "$here/api_main.c" "$work/relu.c" "$lib" -lOpenCL -lm -o "$work/api"
ONNX2CL_CACHE_DIR="$work/cache" "$work/api" "$work/relu.weights"

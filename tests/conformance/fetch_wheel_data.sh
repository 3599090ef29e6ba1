#!/bin/bash
# fetch_wheel_data.sh DEST — ONNX backend test data of the newest `onnx` wheel on PyPI.
#
# Newer onnx wheels (>= 1.2x) no longer ship the generated node test folders, only the case
# generators (onnx/backend/test/case/**). This script downloads the newest wheel
# (`pip download onnx --no-deps`), unpacks it into DEST/pkg, and writes the test folders
# (model.onnx + test_data_set_N/{input,output}_K.pb, the ONNX backend format) of every node and
# simple case into DEST/data/<kind>/<test>, running the wheel's own generators (python3 with
# numpy, protobuf and ml_dtypes; the wheel must match the python ABI), and copies the
# pytorch-converted / pytorch-operator folders it still ships as files. Re-running replaces DEST.
# Exit status non-zero on any failure (no silent skip).
set -euo pipefail
dest=${1:?usage: fetch_wheel_data.sh DEST}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
python3 -m pip download onnx --no-deps --only-binary=:all: -d "$dest.tmp" >&2
whl=$(ls "$dest.tmp"/onnx-*.whl | head -1)
python3 -m zipfile -e "$whl" "$dest.tmp/pkg"
PYTHONPATH="$dest.tmp/pkg" python3 "$here/gen_wheel_data.py" "$dest.tmp/data"
# The model-level folders the wheel still ships as files (pytorch-converted, pytorch-operator).
for k in pytorch-converted pytorch-operator; do
  if [ -d "$dest.tmp/pkg/onnx/backend/test/data/$k" ]; then
    rm -rf "$dest.tmp/data/$k"
    cp -r "$dest.tmp/pkg/onnx/backend/test/data/$k" "$dest.tmp/data/$k"
  fi
done
[ -d "$dest.tmp/data/node" ] || { echo "fetch_wheel_data.sh: no node tests generated" >&2; exit 1; }
basename "$whl" > "$dest.tmp/WHEEL"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "wheel test data: $(cat "$dest/WHEEL") -> $dest/data" >&2

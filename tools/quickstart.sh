#!/bin/bash
# quickstart.sh — on a fresh Debian machine: install what is missing (as root), build onnx2cl,
# compile the bundled tiny Stable Diffusion UNet, run it on its inputs and print its agreement
# with the PyTorch reference output.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs="build-essential cmake pkg-config libpng-dev libprotobuf-c-dev protobuf-c-compiler libonnx-dev libonnx-testdata ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd"
missing=$(for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  if [ "$(id -u)" != 0 ]; then echo "quickstart: missing packages: $missing (run as root or apt-get install them)" >&2; exit 1; fi
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 >/dev/null
m=models/tiny/unet; w=build/quickstart; mkdir -p "$w/out"
build/onnx2cl $m/model.onnx -o $w/unet --shape sample=1,4,16,16 --shape encoder_hidden_states=1,77,32 --stats
$w/unet --input sample=$m/inputs/sample.npy --input timestep=$m/inputs/timestep.npy \
        --input encoder_hidden_states=$m/inputs/encoder_hidden_states.npy --output-dir $w/out --bench 5
build/tests/models/o2c_compare $w/out/out_sample.npy $m/ref/out_sample.npy 1e-4 1e-3

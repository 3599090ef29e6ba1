#!/bin/bash
# bench/gpu/prepare.sh — run HERE (Debian 12 dev machine, network to Debian + PyPI) before a
# device session: fills the git-ignored folder .gpu_carry/ with everything bench/gpu/run.sh needs
# on the NVIDIA machine, which has no network and no OpenCL loader, protobuf-c or diffusers:
#   .gpu_carry/prefix/   onnx2cl and onnx2cl-sd (cmake --install of a Release build of this tree)
#   .gpu_carry/debs/     Debian 12 .debs: OpenCL ICD loader + headers, protobuf-c runtime, onnx2cl-sd's
#                        libpng16 / libmicrohttpd / libsentencepiece (and,
#                        for building from source there if the prebuilt binary will not run:
#                        protoc-c, libprotoc/libprotobuf, libonnx-dev's onnx.proto)
#   .gpu_carry/whl/      wheels missing from the device image: diffusers (+ importlib_metadata)
# Then call the device tool's `run` with carry [".gpu_carry"] and the command in README.md.
# Size: about 15 MB (the device tool carries at most 64 MiB).
set -euo pipefail
cd "$(dirname "$0")/../.."
C=.gpu_carry
rm -rf "$C"; mkdir -p "$C/debs" "$C/whl"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-g >/dev/null # -g: a crash trace there names lines
cmake --build build-gpu -j2 --target onnx2cl onnx2cl_rt onnx2cl-sd
cmake --install build-gpu --prefix "$PWD/$C/prefix" >/dev/null 2>&1 ||
  { # install() of the whole project also wants the tests' targets: copy what run.sh needs
    mkdir -p "$C/prefix/bin" "$C/prefix/lib/onnx2cl" "$C/prefix/include/onnx2cl"
    cp build-gpu/onnx2cl "$C/prefix/bin/"
    cp build-gpu/libonnx2cl_rt.a "$C/prefix/lib/onnx2cl/"
    cp runtime/onnx2cl_rt.h "$C/prefix/include/onnx2cl/"; }
# onnx2cl looks for <prefix>/include/onnx2cl_rt.h and <prefix>/lib/onnx2cl/libonnx2cl_rt.a
cp runtime/onnx2cl_rt.h "$C/prefix/include/"
# onnx2cl-sd beside onnx2cl (the engine runs the compiler next to it; architectures: --arch-dir models/arch)
cp build-gpu/pipeline/onnx2cl-sd "$C/prefix/bin/"
rm -rf "$C/prefix/share" # installed architecture folders (41 MB): run.sh passes the tree's models/arch
"$C/prefix/bin/onnx2cl" models/tiny/text_encoder/model.onnx -o /tmp/o2c_prep_check --shape input_ids=1,77 >/dev/null ||
  { echo "prepare: the carried onnx2cl cannot compile a model" >&2; exit 1; }
(cd "$C/debs" && apt-get download libprotobuf-c1 libcjson1 libcjson-dev libpng-dev ocl-icd-libopencl1 ocl-icd-opencl-dev \
   libpng16-16 libmicrohttpd12 libsentencepiece0 \
   opencl-c-headers libprotobuf-c-dev protobuf-c-compiler libprotoc32 libprotobuf32 libonnx-dev \
   2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d "$C/whl" \
  diffusers==0.42.1 importlib_metadata
git rev-parse HEAD > "$C/commit"
du -sh "$C"
ls "$C/debs" "$C/whl"
echo "prepared $C for commit $(cat $C/commit); now run bench/gpu/run.sh on the device (README.md)"

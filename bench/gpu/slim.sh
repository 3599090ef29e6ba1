#!/bin/bash
# bench/gpu/slim.sh — the device tool sends the whole working tree (tracked files included) and
# refuses more than 64 MiB; this tree's test fixtures and committed tiny models are over 100 MB.
# `bash bench/gpu/slim.sh` removes the folders bench/gpu/run.sh does not read from the working
# tree (models/arch but its sd15, which run.sh's onnx2cl-sd step reads)
# tree (committed files only: nothing of yours is lost); `bash bench/gpu/slim.sh --restore` brings
# them back from HEAD, touching only those folders (never `git checkout -- .`: it would also undo
# your uncommitted edits). Run --restore right after the device call.
set -euo pipefail
cd "$(dirname "$0")/../.."
DIRS="tests/pipeline models/tiny models/ckpt tests/name_map tests/lora"
if [ "${1:-}" = --restore ]; then
  # shellcheck disable=SC2086
  git checkout HEAD -- $DIRS models/arch
  echo "restored: $DIRS models/arch"
  exit 0
fi
# shellcheck disable=SC2086
if ! git diff --quiet HEAD -- $DIRS models/arch; then
  echo "slim.sh: uncommitted changes under $DIRS models/arch: commit them first" >&2; exit 1
fi
rm -rf $DIRS
# models/arch: only sd15 (3 MB) travels, for run.sh's onnx2cl-sd step
find models/arch -mindepth 1 -maxdepth 1 ! -name sd15 -exec rm -rf {} +
echo "removed $DIRS; tracked files left: $(git ls-files -z | xargs -0 du -cb 2>/dev/null | awk '/total$/{s+=$1} END{printf "%.1f MiB", s/1048576}') (+ .gpu_carry $(du -sh .gpu_carry | cut -f1))"

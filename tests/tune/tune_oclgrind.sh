#!/bin/bash
# tune_oclgrind.sh ONNX2CL COMPARE MODEL_DIR WORK ATOL RTOL TILES [onnx2cl flags...]
# A non-default tile set chosen at run time, on oclgrind's simulated device: a tuning file with
# vendor-level entries (another device of oclgrind's vendor) forcing TILES for every tunable
# shape (listed by a --verbose run on the default device), then tests/oclgrind/oclgrind_model.sh
# (0 diagnostics, outputs within ATOL + RTOL*|ref|) with that cache folder; the oclgrind run
# must report using the entries and run the TILES instances.
set -euo pipefail
onnx2cl=$1; compare=$2; dir=$3; work=$4; atol=$5; rtol=$6; tiles=$7; shift 7
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"; mkdir -p "$work/keys/out" "$work/cache" # tuning files are written into cache/ by hand
export ONNX2CL_CACHE_DIR=$work/cache
fail() { echo "FAIL: $*"; exit 1; }
command -v oclgrind > /dev/null || fail "oclgrind not installed (apt-get install oclgrind)"
"$onnx2cl" "$dir/model.onnx" -o "$work/keys/model" "$@"
args=()
for f in "$dir"/inputs/*.npy; do n=$(basename "$f" .npy); args+=(--input "$n=$f"); done
ONNX2CL_KERNELS=gpu "$work/keys/model" "${args[@]}" --output-dir "$work/keys/out" --verbose 2> "$work/keys.txt"
tf=$(sed -n 's/^tuning: no tuning file (looked for \(.*\))$/\1/p' "$work/keys.txt")
[ -n "$tf" ] || fail "no 'tuning: no tuning file (looked for PATH)' line"
oclgrind "$work/keys/model" --list-devices > "$work/list.txt" 2>&1 || true
python3 "$here/tunefile.py" write-vendor "$tf" model "$dir/model.onnx" "$work/keys.txt" "$work/list.txt" "$tiles"
"$here/../oclgrind/oclgrind_model.sh" "$onnx2cl" "$compare" "$dir" "$work/og" "$atol" "$rtol" gpu "$@"
IFS=, read -r tm tn tk rm rn <<< "$tiles"
grep -q "file entry for another device of this vendor" "$work/og/stderr.txt" || fail "the entries were not used"
grep -q "gg_fgemm_${tm}x${tn}x${tk}_r${rm}x${rn}" "$work/og/stderr.txt" || fail "no gg_fgemm_${tm}x${tn}x${tk}_r${rm}x${rn} kernel ran"
echo "ok: tiles $tiles from vendor-level entries on oclgrind: 0 diagnostics, outputs match"

#!/bin/bash
# run_e2e.sh — the proof of onnx2cl-sd: the three tiny models of models/tiny compiled by onnx2cl,
# run by onnx2cl-sd with the tiny tokenizer, tests/pipeline/sched/sd15.json and fixed latents,
# against the images diffusers' StableDiffusionPipeline makes from the same weights
# (tests/pipeline/e2e/*.npy, made by models/make_sd_pipeline_refs.py): max |got - ref| <= 1e-3 on
# the float image in [0,1], for every scheduler at 1, 4 and 20 steps, SD-Turbo's 1-step trailing
# setting with guidance off, a run whose latents come from --seed, and (UNet compiled for batch 1)
# the two-UNet-runs guidance path. Also checks the PNG (size, 8-bit values = round(ref * 255)
# within 1, the parameters text chunk).
#
# Usage: run_e2e.sh ONNX2CL_SD O2C_COMPARE TOKENIZER_DIR WORK_DIR   (WORK_DIR made by build_tiny.sh)
set -euo pipefail
sd=$1 compare=$2 tok=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
e2e=$here/e2e
export ONNX2CL_CACHE_DIR=${ONNX2CL_CACHE_DIR:-$work/cache}

prompt=$(sed -n 's/^# prompt: //p' "$e2e/cases.txt")
negative=$(sed -n 's/^# negative: //p' "$e2e/cases.txt")
fails=0 n=0
run_case() { # run_case CASE UNET_DIR FLAGS...
  local name=$1 udir=$2; shift 2
  local out="$work/$name-$(basename "$udir")"
  (cd "$e2e" && "$sd" --text-encoder "$work/text_encoder.so" --unet "$udir/unet.so" \
      --vae-decoder "$work/vae_decoder.so" --tokenizer "$tok" --scheduler-config "$here/sched/sd15.json" \
      -p "$prompt" -n "$negative" --quiet -o "$out.png" --save-image "$out.npy" "$@") 2> "$out.log" || {
    echo "FAIL $name ($(basename "$udir")): onnx2cl-sd exited $?"; cat "$out.log"; fails=$((fails + 1)); return; }
  n=$((n + 1))
  if ! "$compare" "$out.npy" "$e2e/$name.npy" 1e-3 0 > "$out.cmp" 2>&1; then
    echo "FAIL $name ($(basename "$udir")): $(cat "$out.cmp")"; fails=$((fails + 1)); return
  fi
  printf '%-22s %-3s %s\n' "$name" "$(basename "$udir")" "$(head -c 200 "$out.cmp" | tr '\n' ' ')"
}
while IFS=$'\t' read -r name flags; do
  case $name in '#'*|'') continue ;; esac
  # shellcheck disable=SC2086
  run_case "$name" "$work/b2" $flags
done < "$e2e/cases.txt"
# the two-runs guidance path (UNet compiled for batch 1)
for name in euler_a_4 dpmpp_2m_20 turbo_1; do
  flags=$(awk -F'\t' -v n="$name" '$1 == n {print $2}' "$e2e/cases.txt")
  # shellcheck disable=SC2086
  run_case "$name" "$work/b1" $flags
done
# the PNG of one case: 8-bit values and the parameters chunk
python3 - "$work/dpmpp_2m_20-b2.png" "$e2e/dpmpp_2m_20.npy" <<'PY' || fails=$((fails + 1))
import sys, zlib, struct
import numpy as np
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, text, ihdr = 8, b"", {}, None
while pos < len(data):
    n, = struct.unpack(">I", data[pos:pos + 4]); typ = data[pos + 4:pos + 8]; body = data[pos + 8:pos + 8 + n]
    if typ == b"IHDR": ihdr = struct.unpack(">IIBBBBB", body)
    elif typ == b"IDAT": idat += body
    elif typ == b"tEXt": k, v = body.split(b"\0", 1); text[k.decode()] = v.decode("latin-1")
    pos += 12 + n
w, h, depth, ctype = ihdr[:4]
assert (w, h, depth, ctype) == (32, 32, 8, 2), ihdr
raw = zlib.decompress(idat); stride = 3 * w; rows = []; prev = bytearray(stride)
for y in range(h):
    f = raw[y * (stride + 1)]; line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - 3] if i >= 3 else 0; b = prev[i]; c = prev[i - 3] if i >= 3 else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line)); prev = line
img = np.frombuffer(b"".join(rows), np.uint8).reshape(h, w, 3).astype(int)
ref = np.round(np.load(sys.argv[2])[0].transpose(1, 2, 0) * 255).astype(int)
d = np.abs(img - ref).max()
assert d <= 1, f"PNG pixels differ from round(ref*255) by {d}"
p = text.get("parameters", "")
assert "Steps: 20, Sampler: DPM++ 2M, Schedule type: Automatic, CFG scale: 7.5, Seed: 42, Size: 32x32" in p, p  # A1111's infotext
print(f"PNG ok: 32x32 RGB8, max pixel diff {d}, parameters: {p.splitlines()[-1][:80]}")
PY
echo "$n runs compared, $fails failed"
[ "$fails" = 0 ] && [ "$n" -ge 20 ]

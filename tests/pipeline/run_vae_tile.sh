#!/bin/bash
# run_vae_tile.sh — onnx2cl-sd --vae-tile (issue 21 item 6) end to end on the tiny SD 1.5 single file
# of tests/pipeline/oneshot (VAE factor 2, 32x32 images):
#   - txt2img, --vae-tile 16 (8x8-latent tiles, 3 per side, the last shifted): within
#     vae_tiling.h's bounds of the untiled image (max abs 0.5, mean abs 0.05 on [0,1]) and not equal
#     to it (the tiles did run);
#   - --vae-tile 32 (the whole image): bit for bit the untiled image;
#   - img2img with --vae-tile 16 (encoder and decoder tiled): within the bounds of untiled img2img;
#   - refusals before anything is compiled: a tile that is not a multiple of the VAE factor or below
#     4 factors (exit 2, naming both), --vae-tile without -m (exit 2).
# Usage: run_vae_tile.sh ONNX2CL_SD SOURCE_DIR WORK_DIR
set -uo pipefail
sd=$1 root=$2 work=$3
ck=$root/tests/pipeline/oneshot/tiny_sd15.safetensors
init=$root/tests/pipeline/img2img/init.png
export ONNX2CL_CACHE_DIR=$work/cache
rm -rf "$work"
mkdir -p "$work"
fails=0
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
gen() { # name flags...
  local name=$1
  shift
  "$sd" -m "$ck" -p "a photo of an astronaut riding a horse on mars" -n "blurry" --width 32 --height 32 \
    --steps 4 --seed 42 --quiet -o "$work/$name.png" --save-image "$work/$name.npy" "$@" 2> "$work/$name.log" ||
    { bad "$name: exit $?"; cat "$work/$name.log"; }
}
gen untiled
gen tile16 --vae-tile 16
gen tile32 --vae-tile 32
gen i2i_untiled --init-image "$init" --strength 0.6
gen i2i_tile16 --init-image "$init" --strength 0.6 --vae-tile 16
python3 - "$work" <<'PY' || fails=$((fails + 1))
import sys
import numpy as np
w = sys.argv[1]
ld = lambda n: np.load(f"{w}/{n}.npy")
ok = True
for a, b in (("untiled", "tile16"), ("i2i_untiled", "i2i_tile16")):
    d = np.abs(ld(a) - ld(b))
    good = d.max() <= 0.5 and d.mean() <= 0.05 and d.max() > 0
    print(f"{b} vs {a}: max abs {d.max():.4f} mean abs {d.mean():.4f} (bounds 0.5 / 0.05, > 0): {'ok' if good else 'FAIL'}")
    ok &= bool(good)
same = np.array_equal(ld("untiled"), ld("tile32"))
print(f"tile32 == untiled bit for bit: {same}")
sys.exit(0 if ok and same else 1)
PY
E=$root/tests/bad_input/expect_error.sh
"$E" "$work/bad1" "--vae-tile 7: architecture tiny_sd15 needs a multiple of its VAE factor 2, at least 8" \
  env ONNX2CL_CACHE_DIR="$work/bad1/cache" "$sd" -m "$ck" -p x --width 32 --height 32 --vae-tile 7 -o "$work/bad1/x.png" > "$work/bad1.log" ||
  { bad "--vae-tile 7"; cat "$work/bad1.log"; }
"$E" "$work/bad2" "--vae-tile 16: needs -m CHECKPOINT" \
  "$sd" --models "$work" --hf "$work" -p x --vae-tile 16 -o "$work/bad2/x.png" > "$work/bad2.log" ||
  { bad "--vae-tile without -m"; cat "$work/bad2.log"; }
echo "vae_tile: $fails failed"
[ "$fails" = 0 ]

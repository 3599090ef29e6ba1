#!/bin/bash
# bad_input.sh — onnx2cl-sd on bad input: every case must exit with the expected status (1 = bad
# file or model, 2 = bad flag / output path / size the build cannot do), print a message naming
# the file or flag, and leave no PNG (nor a temporary file) behind. A prompt over 77 tokens must
# succeed with a truncation note.
# Usage: bad_input.sh ONNX2CL_SD TOKENIZER_DIR WORK_DIR   (WORK_DIR made by build_tiny.sh)
set -uo pipefail
sd=$1 tok=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
export ONNX2CL_CACHE_DIR=${ONNX2CL_CACHE_DIR:-$work/cache}
t=$(mktemp -d)
trap 'chmod -R u+w "$t"; rm -rf "$t"' EXIT
mkdir -p "$t/out" "$t/tok_badjson" "$t/tok_badmerge" "$t/tok_nomerge" "$t/tok_big" "$t/models"
cp "$tok"/* "$t/tok_badjson/"; cp "$tok"/* "$t/tok_badmerge/"; cp "$tok/vocab.json" "$t/tok_nomerge/"
cp "$tok"/* "$t/tok_big/" # one id (1000) beyond the tiny text encoder's 1000-row embedding table
sed -i '$ s/}[[:space:]]*$/, "zzzz<\/w>": 1000}/' "$t/tok_big/vocab.json"
head -c 5000 "$tok/vocab.json" > "$t/tok_badjson/vocab.json"
printf '#version: 0.2\ni n\nthis_line_has_one_symbol\n' > "$t/tok_badmerge/merges.txt"
printf '{"beta_schedule": "scaled_linear", "prediction_type": "x0"}' > "$t/sched_badpred.json"
printf '{"beta_schedule": "scaled_linear",, }' > "$t/sched_badjson.json"
printf '{"num_train_timesteps": "many"}' > "$t/sched_badtype.json"
printf '{"beta_schedule": "scaled_linear", "rescale_betas_zero_snr": true}' > "$t/sched_zsnr.json"
printf '{"algorithm_type": "sde-dpmsolver++", "solver_order": 2}' > "$t/sched_sde.json"
printf '{"beta_schedule": "scaled_linear", "lambda_min_clipped": -Infinity, "variance_type": null}' > "$t/sched_pyjson.json"
ln -s "$work/text_encoder.so" "$t/models/text_encoder.so"; ln -s "$work/text_encoder.weights" "$t/models/text_encoder.weights"
ln -s "$work/vae_decoder.so" "$t/models/vae_decoder.so"; ln -s "$work/vae_decoder.weights" "$t/models/vae_decoder.weights"
cp "$work/text_encoder.so" "$t/models/notunet.so"; cp "$work/text_encoder.weights" "$t/models/notunet.weights"
mkdir "$t/out/adir.png"; ln -s "$t/elsewhere.png" "$t/out/link.png"; mkdir "$t/ro"; chmod 555 "$t/ro"
base=(--text-encoder "$work/text_encoder.so" --unet "$work/b2/unet.so" --vae-decoder "$work/vae_decoder.so"
      --tokenizer "$tok" --scheduler-config "$here/sched/sd15.json" --steps 2 --quiet)
fails=0 n=0
expect() { # expect STATUS MESSAGE-REGEX OUTPUT -- ARGS...
  local want=$1 re=$2 out=$3; shift 4
  n=$((n + 1))
  local msg rc
  msg=$("$sd" "$@" -o "$out" 2>&1 >/dev/null); rc=$?
  local leftovers
  leftovers=$(find "$(dirname "$out")" -maxdepth 1 -name "$(basename "$out").tmp.*" 2>/dev/null)
  if [ "$rc" != "$want" ] || ! grep -Eq -- "$re" <<< "$msg" || { [ "$want" != 0 ] && [ -f "$out" ]; } || [ -n "$leftovers" ]; then
    echo "FAIL (exit $rc, want $want; /$re/): onnx2cl-sd $*"; echo "  $msg" | head -5
    [ "$want" != 0 ] && [ -f "$out" ] && echo "  a PNG was left behind: $out"
    [ -n "$leftovers" ] && echo "  temporary files left: $leftovers"
    fails=$((fails + 1))
  else
    echo "ok   exit $rc: $(head -1 <<< "$msg" | cut -c1-150)"
  fi
  rm -f "$out"
}
o=$t/out/x.png
expect 1 "$t/nothere/vocab.json: cannot read" "$o" -- "${base[@]}" -p cat --tokenizer "$t/nothere"
expect 1 "tok_badjson/vocab.json:1:[0-9]+: unterminated string" "$o" -- "${base[@]}" -p cat --tokenizer "$t/tok_badjson"
expect 1 "tok_badmerge/merges.txt:3: expected" "$o" -- "${base[@]}" -p cat --tokenizer "$t/tok_badmerge"
expect 1 "tok_nomerge/merges.txt: cannot read" "$o" -- "${base[@]}" -p cat --tokenizer "$t/tok_nomerge"
expect 1 "text_encoder.so: the tokenizer's ids go up to 1000 \\(vocabulary of 1001\\), but the text encoder's token embedding 'clip.embeddings.token_embedding.weight' has 1000 rows" "$o" -- "${base[@]}" -p cat --tokenizer "$t/tok_big"
expect 1 "nothere.json: cannot read" "$o" -- "${base[@]}" -p cat --scheduler-config "$t/nothere.json"
expect 1 "sched_badpred.json: prediction_type \"x0\"" "$o" -- "${base[@]}" -p cat --scheduler-config "$t/sched_badpred.json"
expect 1 "sched_badjson.json:1:[0-9]+: (expected a member name|not valid JSON)" "$o" -- "${base[@]}" -p cat --scheduler-config "$t/sched_badjson.json"
expect 1 "sched_badtype.json: \"num_train_timesteps\" must be a number" "$o" -- "${base[@]}" -p cat --scheduler-config "$t/sched_badtype.json"
expect 1 "sched_zsnr.json: \"rescale_betas_zero_snr\" other than 0 is not supported by euler" "$o" -- "${base[@]}" -p cat --scheduler-config "$t/sched_zsnr.json"
# a DPMSolverMultistepScheduler config with algorithm_type sde-dpmsolver++ is DPM++ 2M SDE (scheduler.h)
expect 0 "wrote .*x.png" "$o" -- "${base[@]}" -p cat --scheduler dpmpp_2m --scheduler-config "$t/sched_sde.json"
expect 0 "wrote .*x.png" "$o" -- "${base[@]}" -p cat --scheduler dpmpp_2m --scheduler-config "$t/sched_pyjson.json"
expect 0 "scheduler euler \\(.*turbo.json: _class_name EulerDiscreteScheduler\\)" "$o" -- "${base[@]}" -p cat --scheduler-config "$here/sched/turbo.json" --steps 1 --cfg 0
expect 0 "scheduler pndm \\(.*sd15.json: _class_name PNDMScheduler\\)" "$o" -- "${base[@]}" -p cat
expect 2 "^onnx2cl-sd: --width 64 --height 32: the models were compiled for 32x32" "$o" -- "${base[@]}" -p cat --width 64
expect 2 "folder '$t/nodir' does not exist" "$t/nodir/x.png" -- "${base[@]}" -p cat
expect 2 "is a directory" "$t/out/adir.png" -- "${base[@]}" -p cat
expect 2 "symbolic link" "$t/out/link.png" -- "${base[@]}" -p cat
if [ "$(id -u)" != 0 ]; then expect 2 "is not writable" "$t/ro/x.png" -- "${base[@]}" -p cat; fi
expect 2 "^onnx2cl-sd: --save-image: .*is a directory" "$o" -- "${base[@]}" -p cat --save-image "$t/out/adir.png"
expect 1 "fake/unet.so: does not look like a UNet: 1 inputs, expected 3" "$o" -- "${base[@]}" -p cat --unet "$work/fake/unet.so"
expect 1 "models/unet.so: cannot load" "$o" -- "${base[@]}" -p cat --models "$t/models" --text-encoder "$work/text_encoder.so" --vae-decoder "$work/vae_decoder.so" --unet "$t/models/unet.so"
expect 1 "notunet.so: no symbol notunet_desc\\(\\)" "$o" -- "${base[@]}" -p cat --unet "$t/models/notunet.so"
expect 1 "b2/unet.so: does not look like a CLIP text encoder" "$o" -- "${base[@]}" -p cat --text-encoder "$work/b2/unet.so"
expect 2 "--scheduler frob: unknown sampler \"frob\": one of \"Euler\"" "$o" -- "${base[@]}" -p cat --scheduler frob
expect 2 "--scheduler DPM\+\+ SDE: sampler \"DPM\+\+ SDE\" is not supported" "$o" -- "${base[@]}" -p cat --scheduler "DPM++ SDE"
expect 2 "--scheduler Euler a --schedule-type Karras: .*takes no Karras" "$o" -- "${base[@]}" -p cat --scheduler "Euler a" --schedule-type Karras
expect 2 "--karras: DDIM \(DDIMScheduler\) takes no Karras" "$o" -- "${base[@]}" -p cat --scheduler ddim --karras
# a sampler name or schedule type that sets the sigmas, contradicted by --karras / --no-karras
expect 2 "--no-karras: contradicts --scheduler DPM\+\+ 2M Karras \(Karras sigmas\)" "$o" -- "${base[@]}" -p cat --scheduler "DPM++ 2M Karras" --no-karras
expect 2 "--karras: contradicts --scheduler DPM\+\+ 2M --schedule-type Exponential \(exponential sigmas\)" "$o" -- "${base[@]}" -p cat --scheduler "DPM++ 2M" --schedule-type Exponential --karras
# --eta only where a ported sampler takes it (DDIM's eta, TCD's gamma); in the metadata as A1111 writes it
expect 2 "--eta: sampler euler_a takes no eta" "$o" -- "${base[@]}" -p cat --scheduler "Euler a" --eta 0.5
n=$((n + 1))
if ! "$sd" "${base[@]}" -p cat --scheduler DDIM --eta 0.5 -o "$o" 2>/dev/null ||
   ! "${PYTHON3:-python3}" "$here/check_infotext.py" "$o" "Sampler=DDIM" "Eta DDIM=0.5" >/dev/null; then
  echo "FAIL --scheduler DDIM --eta 0.5: not run or no 'Eta DDIM: 0.5' in the metadata"; fails=$((fails + 1))
else echo "ok   --eta 0.5 with DDIM: Eta DDIM in the metadata"; fi
rm -f "$o"
expect 2 "--steps 0: expected a number" "$o" -- "${base[@]}" -p cat --steps 0
expect 2 "--steps 60: LCM allows at most original_inference_steps = 50" "$o" -- "${base[@]}" -p cat --scheduler lcm --steps 60
expect 2 "--prompt: prompt is not valid UTF-8 \(byte 1\)" "$o" -- "${base[@]}" -p $'a\xff'
expect 2 "--seed -2: expected an integer in \[0, 2\^64\), or -1" "$o" -- "${base[@]}" -p cat --seed -2
# --seed -1: a random seed (A1111: randrange(4294967294)), on stderr and in the PNG's metadata
rs=$("$sd" "${base[@]}" -p cat --seed -1 -o "$o" 2>&1 | sed -n 's/^onnx2cl-sd: seed \([0-9]*\) (random)$/\1/p')
n=$((n + 1))
if [ -z "$rs" ] || ! "${PYTHON3:-python3}" "$here/check_infotext.py" "$o" "Seed=$rs" >/dev/null; then
  echo "FAIL --seed -1: seed '$rs' not on stderr or not the metadata's"; fails=$((fails + 1))
else echo "ok   --seed -1: seed $rs in the metadata"; fi
rm -f "$o"
# seeds past 2^64 - 1 for the later images of a run (torch's manual_seed limit): refused, no wrap to 0
expect 2 "--seed 18446744073709551615 with 2 images: the last image's seed, seed \+ 1, would pass 2\^64 - 1" "$o" -- "${base[@]}" -p cat --seed 18446744073709551615 --batch-count 2
# progress counts the user's steps (PLMS: 5 model evaluations for --steps 4, the warm-up in step 1);
# a batch run says "wrote" once
n=$((n + 1))
loud=(); for a in "${base[@]}"; do [ "$a" = --quiet ] || loud+=("$a"); done
msg=$("$sd" "${loud[@]}" -p cat --steps 4 --scheduler PLMS --batch-count 2 -o "$o" 2>&1 >/dev/null)
if [ "$(grep -c '^step [1-4]/4 ' <<< "$msg")" != 8 ] || grep -q '^step .*/5 ' <<< "$msg" ||
   [ "$(grep -c 'wrote' <<< "$msg")" != 1 ] || ! grep -q "wrote $o ... .*x-1.png (2 images of 32x32, seeds 0 ... 1)" <<< "$msg"; then
  echo "FAIL PLMS progress / wrote lines:"; grep "^step\|wrote" <<< "$msg" | head -12; fails=$((fails + 1))
else echo "ok   PLMS --steps 4: step 1/4 ... 4/4 per batch, one 'wrote' line"; fi
rm -f "$o" "$t/out/x-1.png"
# a --batch-count run killed in its second batch keeps the first batch's image (each written
# atomically when its batch is done: docs/txt2img.md) and leaves no partial or temporary file
n=$((n + 1)); rm -f "$t/out/"k*.png
"$sd" "${loud[@]}" -p cat --steps 60 --scheduler Euler --batch-count 3 -o "$t/out/k.png" 2> "$t/kill.err" > /dev/null &
kp=$!
for _ in $(seq 1 300); do grep -q "^onnx2cl-sd: batch 2/3" "$t/kill.err" && break; sleep 0.02; done
kill -9 "$kp" 2>/dev/null; wait "$kp" 2>/dev/null
if [ ! -f "$t/out/k.png" ] || [ -e "$t/out/k-1.png" ] || [ -e "$t/out/k-2.png" ] || ls "$t/out/" | grep -q "\.tmp"; then
  echo "FAIL killed --batch-count run: $(ls "$t/out" | tr '\n' ' ')"; fails=$((fails + 1))
else echo "ok   a --batch-count run killed in batch 2 keeps k.png, no k-1.png, no temporary file"; fi
rm -f "$t/out/"k*.png
expect 2 "--prompt is required" "$o" -- "${base[@]}"
expect 2 "unknown option '--frobnicate'" "$o" -- "${base[@]}" -p cat --frobnicate
expect 1 "^onnx2cl-sd: --latents: $t/sched_badpred.json: not a valid" "$o" -- "${base[@]}" -p cat --latents "$t/sched_badpred.json"
long=$(for i in $(seq 1 120); do printf 'word%d ' "$i"; done)
expect 0 "note: the prompt is [0-9]+ tokens with BOS/EOS; the text encoder takes 77: the last [0-9]+ were dropped" "$o" -- "${base[@]}" -p "$long"
rm -f "$o"
expect 0 "note: the negative prompt is [0-9]+ tokens with BOS/EOS; the text encoder takes 77: the last [0-9]+ were dropped" "$o" -- "${base[@]}" -p cat -n "$long"
rm -f "$o"
# a 20,000-character prompt with CJK characters: the PNG's parameters keep all of it and the
# key line (no fixed-size buffer cutting Steps/Seed off or splitting a UTF-8 character), read back
# by A1111's parser; the negative prompt is kept at --cfg 1 as A1111 writes it
huge=$("${PYTHON3:-python3}" -c "print(('猫の写真 a photo of a cat, ' * 1000)[:19999] + '!')")
n=$((n + 1))
if ! "$sd" "${base[@]}" -p "$huge" -n "blurry" --cfg 1 --seed 7 -o "$o" 2>/dev/null ||
   ! "${PYTHON3:-python3}" "$here/check_infotext.py" "$o" Steps=2 Seed=7 "Negative prompt=blurry" "Prompt=$huge" >/dev/null; then
  echo "FAIL long CJK prompt: metadata cut or unreadable"; fails=$((fails + 1))
else echo "ok   a 20000-character CJK prompt in the metadata with Steps and Seed"; fi
rm -f "$o"
# Outputs over inputs: an output that is a file the run reads (a model's .so or .weights, a
# tokenizer/scheduler/VAE config file, --latents), also through a hard or symbolic link, or two
# outputs naming one file: exit 2 before any work, the flag, the path and the input named, and
# every file left as it was. Models and checkpoint are copies (a regression must not eat the fixtures).
mkdir -p "$t/m" "$t/ck/tokenizer" "$t/ck/scheduler" "$t/ck/vae" "$t/lnk"
cp "$work"/text_encoder.{so,weights} "$work"/vae_decoder.{so,weights} "$work"/b2/unet.{so,weights} "$t/m/"
cp "$tok"/* "$t/ck/tokenizer/"; cp "$here/sched/sd15.json" "$t/ck/scheduler/scheduler_config.json"
printf '{"scaling_factor": 0.18215}' > "$t/ck/vae/config.json"; printf 'npy' > "$t/L.npy"
ln -s "$t/m/unet.so" "$t/lnk/unet.so"; ln -s "$t/m/unet.weights" "$t/lnk/unet.weights"
ln "$t/m/vae_decoder.weights" "$t/out/hard.png"
sums() { find "$t/m" "$t/ck" "$t/L.npy" "$t/out" -type f -exec md5sum {} + | sort; }
clash() { # clash MESSAGE-REGEX -- ARGS...   (ARGS carry their own -o)
  local re=$1; shift 2
  n=$((n + 1))
  local before msg rc
  before=$(sums)
  msg=$(cd "$t/out" && "$sd" --models "$t/m" --hf "$t/ck" -p hi --steps 2 --seed 1 --quiet "$@" 2>&1 >/dev/null); rc=$?
  if [ "$rc" != 2 ] || ! grep -Eq -- "$re" <<< "$msg" || [ "$before" != "$(sums)" ]; then
    echo "FAIL (exit $rc, want 2; /$re/): onnx2cl-sd $*"; echo "  $msg" | head -5
    [ "$before" != "$(sums)" ] && echo "  files changed: $(diff <(echo "$before") <(sums) | head -4)"
    fails=$((fails + 1))
  else
    echo "ok   exit $rc: $(head -1 <<< "$msg" | cut -c1-150)"
  fi
}
clash "^onnx2cl-sd: --output $t/m/unet.weights: is the UNet's weights file" -- -o "$t/m/unet.weights"
clash "^onnx2cl-sd: --save-image $t/m/unet.so: is the UNet's shared object $t/m/unet.so, which this run reads" -- -o x.png --save-image "$t/m/unet.so"
clash "^onnx2cl-sd: --output $t/m/text_encoder.weights: is the text encoder's weights file" -- -o "$t/m/text_encoder.weights"
clash "^onnx2cl-sd: --output $t/m/vae_decoder.so: is the VAE decoder's shared object" -- -o "$t/m/vae_decoder.so"
clash "^onnx2cl-sd: --output $t/ck/tokenizer/vocab.json: is the tokenizer's vocab.json" -- -o "$t/ck/tokenizer/vocab.json"
clash "^onnx2cl-sd: --save-image ../ck/tokenizer/merges.txt: is the tokenizer's merges.txt" -- --save-image ../ck/tokenizer/merges.txt
clash "^onnx2cl-sd: --output .*tokenizer_config.json: is the tokenizer's tokenizer_config.json" -- -o "$t/ck/tokenizer/tokenizer_config.json"
clash "^onnx2cl-sd: --output .*scheduler_config.json: is the scheduler config" -- -o "$t/ck/scheduler/scheduler_config.json"
clash "^onnx2cl-sd: --save-image .*vae/config.json: is the VAE config" -- --save-image "$t/ck/vae/config.json"
clash "^onnx2cl-sd: --save-image $t/L.npy: is the --latents file" -- --latents "$t/L.npy" --save-image "$t/L.npy"
clash "^onnx2cl-sd: --output $t/m/unet.weights: is the UNet's weights file $t/lnk/unet.weights," -- -o "$t/m/unet.weights" --unet "$t/lnk/unet.so"
clash "^onnx2cl-sd: --output hard.png: is the VAE decoder's weights file" -- -o hard.png
clash "^onnx2cl-sd: --output same.png and --save-image same.png would both be written to same.png" -- -o same.png --save-image same.png
clash "^onnx2cl-sd: --output ./same.png and --save-image $t/out/same.png would both be written" -- -o ./same.png --save-image "$t/out/same.png"
clash "^onnx2cl-sd: --output hard.png and --save-image .*would both be written" -- -o hard.png --save-image "$t/out/hard.png" --vae-decoder "$work/vae_decoder.so"
echo "$n cases, $fails failed"
[ "$fails" = 0 ]

#!/bin/bash
# bench/gpu/run.sh — ONE command for the lent NVIDIA machine (device tool `run`, carry
# [".gpu_carry"], made by bench/gpu/prepare.sh). Budget: about 9 minutes, so that it can run twice
# in a session's 15 minutes of device time. Every step has its own time limit and the report is
# written after each model, so a step that hangs or fails costs its limit, not the run.
#
#   1. environment: unpack the carried .debs into /tmp/sys (never into /), point the OpenCL ICD
#      loader at the driver's libnvidia-opencl.so.1 through a private vendors folder, install the
#      carried wheels into /tmp/site; onnx2cl from .gpu_carry/prefix (built from source there if
#      that binary does not run);
#   2. onnx2cl --list-devices (OpenCL C version, local memory, max allocation, half probes);
#   3. per model (UNet 1x4x64x64 + 77x768, VAE decoder 64->512, CLIP 77 tokens):
#      export with models/export_sd.py --size full (fixed seed; PyTorch fp32 CPU reference),
#      onnx2cl compile, first start (cold program cache) and second start with --verbose,
#      --bench N (median), --profile, outputs vs the PyTorch reference; then PyTorch on the same
#      GPU (bench/gpu/torch_ref.py: fp32 without TF32, fp32 with PyTorch's default TF32 conv,
#      fp16; CUDA events, median of N after warm-up; FLOPs by torch's FlopCounterMode);
#   4. bench/gpu/report.py writes $OUT/report.md and $OUT/report.json.
#   Before 3 (BENCH_SD=1, the default): onnx2cl-sd -m on a full-size SD 1.5 file, 512x512, 20 steps, cold and
#      warm, against diffusers on the same GPU (bench/oneshot_full.py; $OUT/sd_e2e.md).
# Env: BENCH_MODELS (default "unet vae_decoder text_encoder": the headline model first, so a run
#      that hits the time limit still reports it), BENCH_RUNS (default 5),
#      BENCH_KERNELS (default "auto"; "gpu cpu" times both classes), BENCH_MODELS_DIR (use
#      already exported model folders <dir>/<model>/ instead of exporting: e.g. models/tiny for a
#      dry run of the script on a machine without a GPU or torch), BENCH_TUNE (seconds; default 0
#      = off: after the timed run, `--tune BENCH_TUNE` and the timed run again with the tuned
#      tiles, logged as tune_<model>_<class> / run_tuned_<model>_<class>; docs/tuning.md).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/o2c_gpu_out}
mkdir -p "$OUT"
W=/tmp/o2c_gpu; rm -rf "$W"; mkdir -p "$W"
C=$ROOT/.gpu_carry
LOG=$OUT/log.txt
MODELS=${BENCH_MODELS:-unet vae_decoder text_encoder}
RUNS=${BENCH_RUNS:-5}
KCLASSES=${BENCH_KERNELS:-auto}
T0=$(date +%s)
log() { echo "[$(date +%T) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$LOG"; }
# step NAME LIMIT CMD...: runs CMD with a time limit, its output appended to $W/NAME.log and $LOG
step() {
  local name=$1 lim=$2; shift 2
  log "step $name (limit ${lim}s): $*"
  local s=$(date +%s)
  timeout --kill-after=10 "$lim" "$@" > "$W/$name.log" 2>&1
  local rc=$?
  cat "$W/$name.log" >> "$LOG"
  if grep -q '^segv-frame:' "$W/$name.log"; then # a crash: symbolize the frames (segv_trace.c)
    grep '^segv-frame:' "$W/$name.log" | while read -r _ mod off sym; do
      case $mod in *.so*|\?) echo "  $mod $off $sym" ;;
        *) echo "  $mod $off $(addr2line -f -C -i -e "$mod" "$off" 2>&1 | tr '\n' ' ')" ;; esac
    done | tee -a "$LOG" > "$W/$name.trace"
  fi
  echo "$name $rc $(( $(date +%s) - s ))" >> "$W/steps.txt"
  log "step $name: exit $rc after $(( $(date +%s) - s ))s"
  return $rc
}

# ---- 1. environment ----
mkdir -p /tmp/sys
for d in "$C"/debs/*.deb; do dpkg -x "$d" /tmp/sys; done
L=/tmp/sys/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LIBRARY_PATH=$L C_INCLUDE_PATH=/tmp/sys/usr/include
NV=$( (ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so/{print $NF}'; \
       find /usr/local/nvidia /usr/lib /usr/lib64 -name 'libnvidia-opencl.so*' 2>/dev/null) | head -1)
if [ -n "$NV" ]; then # the driver's ICD file may be missing: a private vendors folder naming it
  mkdir -p /tmp/icd; echo "$NV" > /tmp/icd/nvidia.icd; export OCL_ICD_VENDORS=/tmp/icd
fi
log "NVIDIA OpenCL library: ${NV:-NOT FOUND}; /etc/OpenCL/vendors: $(ls /etc/OpenCL/vendors 2>/dev/null | tr '\n' ' ')"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site "$C"/whl/*.whl >> "$LOG" 2>&1
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv >> "$W/gpu.txt" 2>&1
O2C=$C/prefix/bin/onnx2cl
if ! "$O2C" --version >> "$LOG" 2>&1; then
  log "prebuilt onnx2cl does not run here: building from source"
  ln -sf $L/libprotobuf-c.so.1 $L/libprotobuf-c.so 2>/dev/null
  step build 240 bash -c "cmake -S '$ROOT' -B $W/build -DCMAKE_BUILD_TYPE=Release \
      -DPROTOC_C=/tmp/sys/usr/bin/protoc-c -DPROTOBUF_C_LIB=$L/libprotobuf-c.so \
      -DONNX_PROTO_DIR=/tmp/sys/usr/include -DOpenCL_LIBRARY=$L/libOpenCL.so.1 \
      -DOpenCL_INCLUDE_DIR=/tmp/sys/usr/include && cmake --build $W/build -j16 --target onnx2cl onnx2cl_rt"
  O2C=$W/build/onnx2cl
fi
export ONNX2CL_CACHE_DIR=$W/cache
# a crash in a model binary prints its stack (bench/gpu/segv_trace.c); -g for addr2line's lines
TRACE=()
if gcc -shared -fPIC -O1 -o /tmp/segv_trace.so bench/gpu/segv_trace.c -ldl >> "$LOG" 2>&1; then
  TRACE=(env LD_PRELOAD=/tmp/segv_trace.so); export CC="cc -g"
fi

# ---- 2. devices ----
step devices 120 "$O2C" --list-devices
cp "$W/devices.log" "$W/devices.txt" 2>/dev/null

# ---- 3. txt2img through the engine (BENCH_SD=0: skipped): a full-size SD 1.5 single file with random weights
#      (bench/oneshot_full.py), onnx2cl-sd -m at 512x512, 20 Euler steps, cfg 7.5, cold cache then warm, against
#      diffusers' StableDiffusionPipeline on the same GPU (float32, TF32 off) in the same command ----
if [ "${BENCH_SD:-1}" != 0 ] && [ -x "$C/prefix/bin/onnx2cl-sd" ]; then
  step sd_e2e 480 env PYTHONUNBUFFERED=1 python3 bench/oneshot_full.py --sd "$C/prefix/bin/onnx2cl-sd" \
    --arch-dir "$ROOT/models/arch" --work "$W/sd" --size "${BENCH_SD_SIZE:-512}" --steps "${BENCH_SD_STEPS:-20}" \
    --ref-device "${BENCH_SD_REF:-cuda}"
  cp "$W/sd_e2e.log" "$OUT/sd_e2e.md"
fi

# ---- 4. models ----
for m in $MODELS; do
  d=$W/models/full/$m
  if [ -n "${BENCH_MODELS_DIR:-}" ]; then
    mkdir -p "$W/models/full"; cp -r "$BENCH_MODELS_DIR/$m" "$d"
  else
    step "export_$m" 300 python3 models/export_sd.py --size full --models "$m" --out "$W/models" \
      --no-ort-check || continue
  fi
  mkdir -p "$W/$m"
  flags=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['onnx2cl_shape_flags'])" "$d/meta.json")
  # shellcheck disable=SC2086
  step "compile_$m" 240 "$O2C" "$d/model.onnx" -o "$W/$m/model" $flags --stats --stats-json "$W/$m/stats.json" || continue
  ins=()
  for f in "$d"/inputs/*.npy; do ins+=(--input "$(basename "$f" .npy)=$f"); done
  for k in $KCLASSES; do
    rm -rf "$ONNX2CL_CACHE_DIR" # cold start: no onnx2cl program cache, no NVIDIA compute cache
    # a failed first start still lets the timed run try (a crash at exit leaves its timings)
    [ "${BENCH_FIRST:-1}" = 0 ] || # BENCH_FIRST=0: no cold first start (build time not measured)
    step "first_${m}_$k" 300 "${TRACE[@]}" env CUDA_CACHE_DISABLE=1 "$W/$m/model" "${ins[@]}" --kernels "$k" --verbose --output-dir "$W/$m/out_$k"
    step "run_${m}_$k" 300 "${TRACE[@]}" "$W/$m/model" "${ins[@]}" --kernels "$k" --verbose --bench "$RUNS" --profile
    if [ "${BENCH_TUNE:-0}" != 0 ]; then # --tune, then the same timing with the tuned tiles
      step "tune_${m}_$k" $(( BENCH_TUNE + 240 )) "$W/$m/model" "${ins[@]}" --kernels "$k" \
        --tune "$BENCH_TUNE" --output-dir "$W/$m/out_tuned_$k"
      step "run_tuned_${m}_$k" 300 "$W/$m/model" "${ins[@]}" --kernels "$k" --verbose --bench "$RUNS" --profile
    fi
  done
  step "torch_$m" 300 python3 bench/gpu/torch_ref.py --model "$m" --runs "$RUNS" \
    --models-dir "$W/models/full" --out "$W/torch_$m.json"
  python3 bench/gpu/report.py --work "$W" --out "$OUT" --models "$MODELS" --kernels "$KCLASSES" >> "$LOG" 2>&1
done
python3 bench/gpu/report.py --work "$W" --out "$OUT" --models "$MODELS" --kernels "$KCLASSES" >> "$LOG" 2>&1
log "done; report: $OUT/report.md"
cat "$OUT/report.md" 2>/dev/null | head -80

#!/bin/bash
# plant_race_cc.sh CC-ARGS... — a C compiler wrapper for `onnx2cl --cc` that plants a data race
# before compiling: in every generated .c among its arguments it deletes the barrier that follows
# "s[lid] = v;" in the work-group sum helpers of kernels/gnorm.cl and kernels/norm.cl, so the
# reduction tree reads s[lid + off] that another work-item may not have written yet (a missing
# barrier before a __local read; PoCL runs it correctly, oclgrind must report it). Then runs
# $O2C_REAL_CC (default cc). Fails loudly if no barrier was removed (the kernels' text changed:
# update the pattern), so the race test can never pass vacuously.
# The weights file beside the .c stays valid: its layout hash (weights format 3,
# runtime/onnx2cl_rt.h) covers the stored tensors, not the kernel sources.
set -euo pipefail
for a in "$@"; do
  case "$a" in
  *.c)
    before=$(grep -c 'barrier(CLK_LOCAL_MEM_FENCE)' "$a" || true)
    sed -i '/"    s\[lid\] = v;\\n"/{n;/barrier(CLK_LOCAL_MEM_FENCE)/d}' "$a"
    after=$(grep -c 'barrier(CLK_LOCAL_MEM_FENCE)' "$a" || true)
    if [ "$after" -ge "$before" ]; then
      echo "plant_race_cc.sh: no barrier after 's[lid] = v;' in $a: update the pattern" >&2
      exit 1
    fi
    echo "plant_race_cc.sh: removed $((before - after)) barrier(s) from $a" >&2
    ;;
  esac
done
exec "${O2C_REAL_CC:-cc}" "$@"

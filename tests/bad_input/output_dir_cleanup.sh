#!/bin/bash
# output_dir_cleanup.sh ONNX2CL MODEL WORK
# A generated executable whose output write fails (disk full, simulated with a file size limit:
# ulimit -f, SIGXFSZ ignored) exits 1 naming the output and removes the --output-dir folders
# it created (only those, only while empty): out/new/sub -> out left empty; a folder that
# existed before (pre/, holding a file) stays with its file; with --output FILE as well, the
# created folder goes too. MODEL: tests/bad_input/symbolic.onnx (Relu), built at [262144,3]
# so that its 3 MiB output is over the 1 MiB limit while the OpenCL compiler's files are not.
set -uo pipefail
o2c=$1; model=$2; work=$3
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$work"; mkdir -p "$work/out" "$work/out2/pre" "$work/out3"
touch "$work/out2/pre/keep"
export ONNX2CL_CACHE_DIR=$work/cache
"$o2c" "$model" --shape x=262144,3 -o "$work/big" 2> /dev/null || exit 1
# x.npy: float32 [262144,3] of zeros (numpy format 1.0: 10-byte prefix + header = 128 bytes)
h="{'descr': '<f4', 'fortran_order': False, 'shape': (262144, 3), }"
h=$(printf '%-117s' "$h")
{ printf '\x93NUMPY\x01\x00\x76\x00%s\n' "$h"; head -c $((262144 * 12)) /dev/zero; } > "$work/x.npy"
# warm run without a limit (builds and caches the program): must succeed
"$work/big" --input "x=$work/x.npy" --output-dir "$work/warm" > /dev/null || { echo "FAIL: unlimited run"; exit 1; }
[ -f "$work/warm/y.npy" ] || bad "the unlimited run wrote no y.npy"
limited() { (trap '' XFSZ; ulimit -f 1024; exec "$work/big" --input "x=$work/x.npy" "$@"); }
check() { # check NAME RC ERRFILE
  if [ "$2" -ne 1 ] || ! grep -Eq "output 'y': .*y.npy: write failed: File too large" "$3"; then
    bad "$1: exit $2, $(cat "$3")"
  fi
}
limited --output-dir "$work/out/new/sub" 2> "$work/1.err"; check new_sub $? "$work/1.err"
[ -z "$(ls -A "$work/out")" ] || bad "new_sub: left $(cd "$work/out" && find .)"
limited --output-dir "$work/out2/pre/new" 2> "$work/2.err"; check pre_new $? "$work/2.err"
[ "$(cd "$work/out2" && find . | sort | tr '\n' ' ')" = ". ./pre ./pre/keep " ] ||
  bad "pre_new: out2 holds $(cd "$work/out2" && find . | sort | tr '\n' ' ')"
limited --output "y=$work/out3/y.npy" --output-dir "$work/out3/d" 2> "$work/3.err"; check with_output $? "$work/3.err"
[ -z "$(ls -A "$work/out3")" ] || bad "with_output: left $(cd "$work/out3" && find .)"
[ $fail -eq 0 ] && echo ok
exit $fail

# sd_expect.sh — sourced by the onnx2cl-sd refusal tests: `sd_expect NAME STATUS PATTERN -- ARGS...`
# runs "$sd" -o $work/NAME.png --width 32 --height 32 ARGS and checks the exit status, that stderr
# has PATTERN (grep) and that no PNG was written; counts cases in $n and failures in $fails.
sd_expect() {
  local name=$1 want=$2 pat=$3; shift 4
  n=$((n + 1))
  "$sd" -o "$work/$name.png" --width 32 --height 32 "$@" > "$work/$name.out" 2> "$work/$name.err"
  local got=$?
  if [ "$got" != "$want" ] || ! grep -q -- "$pat" "$work/$name.err"; then
    echo "FAIL $name: exit $got (want $want), message: $(head -c 400 "$work/$name.err")"; fails=$((fails + 1)); return
  fi
  if [ -e "$work/$name.png" ]; then echo "FAIL $name: wrote a PNG"; fails=$((fails + 1)); return; fi
  echo "ok $name: $(head -1 "$work/$name.err" | head -c 220)"
}

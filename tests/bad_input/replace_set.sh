#!/bin/bash
# replace_set.sh — `onnx2cl MODEL -o DIR/c` replaces the set c, c.c, c.h, c.weights all or
# nothing: after a build (a stand-in C compiler writes the executable), a rebuild that fails
# or is interrupted while the C compiler runs must leave none of the four behind (an old `c`
# would read a weights file that is gone), nor a temporary, nor a running C compiler, and exit
# with the failure's status (1, or 128+N for signal N).
# Usage: replace_set.sh ONNX2CL MODEL WORK_DIR CASE
#   CASE cc_fails:     --cc false (the C compile fails): exit 1
#   CASE cc_killed:    SIGTERM while a slow --cc runs: exit 143
set -u
o2c=$1 model=$2 work=$3 case=$4
d=$work/$case/out m=$work/$case/marks
rm -rf "$work/$case"; mkdir -p "$d" "$m"
# stand-in C compilers: `ok` writes a script at its -o path; `slow` records its pid, the pid of
# its sleep and waits
cat > "$m/ok" <<'EOS'
#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
printf '#!/bin/sh\necho old build\n' > "$out"
EOS
cat > "$m/slow" <<EOS
#!/bin/bash
echo \$\$ > "$m/cc.pid"
sleep 60 >/dev/null 2>&1 & echo \$! > "$m/sleep.pid"
wait
EOS
chmod +x "$m/ok" "$m/slow"
trap 'for f in "$m"/*.pid; do [ -s "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done' EXIT
fail() { echo "FAIL ($case): $*"; ls -la "$d"; exit 1; }
"$o2c" "$model" -o "$d/c" --shape x=2,3 --cc "$m/ok" || fail "the first build failed"
[ -x "$d/c" ] && [ -f "$d/c.weights" ] || fail "the first build wrote no c, c.weights"
case $case in
  cc_fails)
    msg=$("$o2c" "$model" -o "$d/c" --shape x=2,3 --cc false 2>&1); rc=$?
    echo "exit $rc: $msg"
    [ "$rc" = 1 ] || fail "exit $rc, expected 1"
    grep -q "the C compiler 'false' failed" <<< "$msg" || fail "no message naming the C compiler" ;;
  cc_killed)
    "$o2c" "$model" -o "$d/c" --shape x=2,3 --cc "$m/slow" & pid=$!
    for _ in $(seq 200); do [ -s "$m/sleep.pid" ] && break; sleep 0.1; done
    [ -s "$m/sleep.pid" ] || fail "the slow C compiler never started"
    kill -TERM "$pid"; wait "$pid"; rc=$?
    echo "exit $rc after SIGTERM"
    [ "$rc" = 143 ] || fail "exit $rc, expected 143" ;;
  *) fail "unknown case" ;;
esac
left=$(ls -A "$d")
[ -z "$left" ] || fail "left behind: $left"
echo "ok ($case): nothing left in $d"

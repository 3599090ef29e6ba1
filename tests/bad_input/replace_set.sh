#!/bin/bash
# replace_set.sh — `onnx2cl MODEL -o DIR/c` replaces the set c, c.c, c.h, c.weights all or
# nothing: after a build (a stand-in C compiler writes the executable), a rebuild that fails
# or is interrupted while the C compiler runs must leave none of the four behind (an old `c`
# would read a weights file that is gone), nor a temporary, nor a running C compiler (nor what
# it started), and exit with the failure's status (1, or 128+N for signal N).
# Usage: replace_set.sh ONNX2CL MODEL WORK_DIR CASE [SIGNAL]
#   CASE cc_fails:     --cc false (the C compile fails): exit 1
#   CASE cc_killed:    SIGNAL (default TERM) while a slow --cc runs: exit 128+SIGNAL
#   CASE stats_epipe:  --stats 2>&1 | (reader gone once the outputs are written): SIGPIPE at the
#                      stats line after the C compile, exit 141, nothing left
#   CASE stats_epipe_early: --stats with stderr a pipe nobody reads: SIGPIPE at the first stats
#                      line (the passes), before any output is replaced: exit 141, the previous
#                      build's set left as it was
set -u
o2c=$1 model=$2 work=$3 case=$4 sig=${5:-TERM}
d=$work/$case$sig/out m=$work/$case$sig/marks
rm -rf "$work/$case$sig"; mkdir -p "$d" "$m"
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
cat > "$m/gated" <<EOS
#!/bin/sh
for _ in \$(seq 200); do [ -e "$m/reader.done" ] && break; sleep 0.1; done
exec "$m/ok" "\$@"
EOS
chmod +x "$m/ok" "$m/slow" "$m/gated"
alive() { local st; st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) && [ "$st" != Z ]; }
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
  cc_killed) # a background job of a script ignores SIGINT and SIGQUIT: --default-signal undoes that
    env --default-signal=INT,QUIT "$o2c" "$model" -o "$d/c" --shape x=2,3 --cc "$m/slow" & pid=$!
    for _ in $(seq 200); do [ -s "$m/sleep.pid" ] && break; sleep 0.1; done
    [ -s "$m/sleep.pid" ] || fail "the slow C compiler never started"
    kill -s "$sig" "$pid"; wait "$pid"; rc=$?
    want=$((128 + $(kill -l "$sig")))
    echo "exit $rc after SIG$sig"
    [ "$rc" = "$want" ] || fail "exit $rc, expected $want"
    for f in cc sleep; do # SIGKILL is delivered asynchronously: give it 3 s
      for _ in $(seq 30); do alive "$(cat "$m/$f.pid")" || break; sleep 0.1; done
      alive "$(cat "$m/$f.pid")" && fail "the C compiler's $f process still runs"
    done ;;
  stats_epipe)
    "$o2c" "$model" -o "$d/c" --shape x=2,3 --cc "$m/gated" --stats 2>&1 >/dev/null |
      { grep -q '^time: load'; exec 0<&-; touch "$m/reader.done"; } # the read end closed before the C compiler
                                                                     # goes on (under load the subshell's exit lagged)
    rc=${PIPESTATUS[0]}; echo "exit $rc with stderr's reader gone"
    [ "$rc" = 141 ] || fail "exit $rc, expected 141" ;;
  stats_epipe_early)
    before=$(cd "$d" && md5sum c c.c c.h c.weights)
    python3 -c 'import os, subprocess, sys
r, w = os.pipe(); os.close(r)
sys.exit(subprocess.call(sys.argv[1:], stderr=w))' "$o2c" "$model" -o "$d/c" --shape x=2,3 --cc "$m/ok" --stats
    rc=$?; echo "exit $rc with stderr a broken pipe"
    [ "$rc" = 141 ] || fail "exit $rc, expected 141"
    [ "$(cd "$d" && md5sum c c.c c.h c.weights 2>&1)" = "$before" ] || fail "the previous build's set changed"
    [ "$(ls -A "$d" | wc -l)" = 4 ] || fail "files left beside the previous set"
    echo "ok ($case): the previous set is as it was"; exit 0 ;;
  *) fail "unknown case" ;;
esac
left=$(ls -A "$d")
[ -z "$left" ] || fail "left behind: $left"
echo "ok ($case): nothing left in $d"

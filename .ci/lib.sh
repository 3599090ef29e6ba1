# .ci/lib.sh — counting helpers shared by .ci/run, .ci/clang.sh and .ci/mingw.sh (sourced).
# ci_step JOB LOGDIR NAME CMD...  runs CMD (output to LOGDIR/NAME.log), counts one check, prints
#                                 "ok|FAIL JOB NAME" (and the log's tail on failure)
# ci_ctest JOB LOGFILE ARGS...    runs ctest ARGS (output shown and kept in LOGFILE), counts each
#                                 test from ctest's "N tests failed out of T" summary; no summary
#                                 (ctest itself failed) counts as one failure
# ci_add_counts LINE              adds "…: N passed, M failed" (a job's last line) to the counts
# ci_verdict JOB                  prints "JOB: N passed, N failed"; returns 1 if any failed
CI_PASS=0
CI_FAIL=0
ci_step() {
  local job=$1 dir=$2 name=$3; shift 3
  if "$@" > "$dir/$name.log" 2>&1; then
    CI_PASS=$((CI_PASS + 1)); echo "ok   $job $name"
  else
    CI_FAIL=$((CI_FAIL + 1)); echo "FAIL $job $name (log: $dir/$name.log)"
    grep -E 'warning:|error:' "$dir/$name.log" | head -20 || true; tail -15 "$dir/$name.log"
  fi
}
ci_ctest() {
  local job=$1 log=$2; shift 2
  ctest "$@" 2>&1 | tee "$log" | grep -Ev '^ *(Start|[0-9]+/[0-9]+ Test +#.* Passed)' || true
  local line tot nf
  line=$(grep -E '[0-9]+ tests failed out of [0-9]+' "$log" | tail -1)
  if [ -z "$line" ]; then
    CI_FAIL=$((CI_FAIL + 1)); echo "FAIL $job ctest: no summary (log: $log)"; return
  fi
  tot=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line"); nf=$(sed -E 's/.*, ([0-9]+) tests failed.*/\1/' <<<"$line")
  CI_PASS=$((CI_PASS + tot - nf)); CI_FAIL=$((CI_FAIL + nf))
}
ci_add_counts() {
  local p f
  p=$(sed -nE 's/.*: ([0-9]+) passed, ([0-9]+) failed$/\1/p' <<<"$1"); f=$(sed -nE 's/.*: ([0-9]+) passed, ([0-9]+) failed$/\2/p' <<<"$1")
  if [ -z "$p" ]; then CI_FAIL=$((CI_FAIL + 1)); echo "FAIL: no verdict line from a job: '$1'"; return; fi
  CI_PASS=$((CI_PASS + p)); CI_FAIL=$((CI_FAIL + f))
}
ci_verdict() {
  echo "$1: $CI_PASS passed, $CI_FAIL failed"
  [ "$CI_FAIL" = 0 ]
}

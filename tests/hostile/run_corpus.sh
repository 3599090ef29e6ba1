#!/bin/bash
# run_corpus.sh MODE ONNX2CL CORPUS_DIR WORK_DIR   (ctest label bad-input; see CMakeLists.txt)
#
# Runs the onnx2cl CLI on hostile models, each in its own sandbox WORK/<case>/{model,out,cwd}
# (the case's files copied into model/, output -o out/m.c, run from the empty cwd/), and asserts:
#   - exit status 1 or 2: an error, not a crash, a signal, a sanitizer report or a timeout
#     (sanitizer exit codes are moved to 86/87 so an ASan build cannot pass a crash as "exit 1");
#   - stderr is exactly one line (warnings aside), naming the model file and matching the case's
#     regex (node name, op and index where there is a node);
#   - nothing left behind: out/ and cwd/ empty, model/ unchanged;
#   - (cases mode, when strace is installed) no file opened outside the model's folder, out/ and
#     the system's libraries, and nothing created, renamed or removed outside out/.
# MODE: cases      every case of CORPUS/cases.txt (made by make_corpus.py) and CORPUS/../fuzz_found
#       truncate   CORPUS/base/model.onnx cut at every 4th offset
#       flip       CORPUS/base/model.onnx with 1-4 bytes replaced, 200 deterministic variants;
#                  here (and for truncations) success is allowed too if out/m.c, out/m.h and
#                  out/m.weights are all written.
# Prints one line per case; exits 1 if any failed.
set -u
mode=$1; o2c=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); corpus=$(cd "$3" && pwd); work=$4
mkdir -p "$work"; work=$(cd "$work" && pwd)
export LC_ALL=C  # hostile names in messages may hold any byte: grep them as text
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}exitcode=86"
have_strace=0
if [ "$mode" = cases ] && command -v strace >/dev/null && strace -f -qq -o /dev/null true 2>/dev/null; then
  have_strace=1
fi
fails=0 n=0

# sandbox NAME SRC_DIR: fresh WORK/NAME/{model,out,cwd} with SRC_DIR's files and SETUP applied.
sandbox() {
  local d=$work/$1
  rm -rf "$d"; mkdir -p "$d/model" "$d/out" "$d/cwd"
  for f in "$2"/*; do
    [ -f "$f" ] && [ "$(basename "$f")" != SETUP ] && cp "$f" "$d/model/"
  done
  if [ -f "$2/SETUP" ]; then
    while read -r op a b; do
      case $op in
        outside) printf 'outside data: must never be read' > "$d/$a" ;;
        symlink) ln -s "$a" "$d/model/$b" ;;
        fifo) mkfifo "$d/model/$a" ;;
        mkdir) mkdir -p "$d/model/$a" ;;
      esac
    done < "$2/SETUP"
  fi
}

listing() { (cd "$1" && find . -printf '%p %s %y\n' | sort); }

# check NAME REGEX ALLOW_OK [ARGS...]: runs onnx2cl in sandbox NAME and reports.
check() {
  local name=$1 re=$2 allow_ok=$3; shift 3
  local d=$work/$name model=$work/$name/model/model.onnx why=""
  local before; before=$(listing "$d/model")
  local pre=()
  [ $have_strace = 1 ] && pre=(strace -f -qq -o "$d/trace" -e trace=open,openat,creat,truncate,mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,link,linkat,symlink,symlinkat)
  # LeakSanitizer cannot run under ptrace: leak checking is off for traced runs only
  (cd "$d/cwd" && [ $have_strace = 1 ] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
   timeout 30 "${pre[@]}" "$o2c" "$model" -o "$d/out/m.c" "$@") > "$d/stdout" 2> "$d/stderr"
  local st=$? msg
  msg=$(grep -av 'warning' "$d/stderr" | grep -av '^[[:space:]]*$')
  n=$((n + 1))
  if [ $st = 0 ] && [ "$allow_ok" = 1 ]; then
    [ -s "$d/out/m.c" ] && [ -s "$d/out/m.h" ] && [ -f "$d/out/m.weights" ] || why="exit 0 but outputs missing"
    rm -f "$d/out/m.c" "$d/out/m.h" "$d/out/m.weights"
  elif [ $st != 1 ] && [ $st != 2 ]; then
    why="exit status $st (want 1 or 2)"
  elif [ "$(printf '%s\n' "$msg" | wc -l)" != 1 ] || [ -z "$msg" ]; then
    why="want exactly one error line"
  elif ! grep -aqF -- "$model" <<<"$msg"; then
    why="message does not name the model file"
  elif ! grep -aEq -- "$re" <<<"$msg"; then
    why="message does not match /$re/"
  fi
  if [ -z "$why" ]; then
    local left; left=$(ls -A "$d/out" "$d/cwd" | grep -v ':$' | grep -v '^$')
    [ -n "$left" ] && why="left behind: $(echo $left)"
    [ "$before" != "$(listing "$d/model")" ] && why="model folder changed"
  fi
  if [ -z "$why" ] && [ $have_strace = 1 ]; then
    # paths opened / created / removed: allowed are the model's folder (reads), out/ (anything),
    # system files (reads). Writes elsewhere or reads outside are failures.
    local bad
    bad=$(grep -v -e '= -1 ENOENT' -e '^[0-9]* +++' -e '^[0-9]* ---' "$d/trace" | awk -v M="$d/model/" -v O="$d/out/" '
      { if (match($0, /"[^"]*"/) == 0) next; p = substr($0, RSTART + 1, RLENGTH - 2)
        w = ($0 ~ /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|^[0-9]+ +(creat|truncate|mkdir|rename|unlink|link|symlink)/)
        if (index(p, O) == 1) next
        if (!w && index(p, M) == 1) next
        if (!w && p ~ /^(\/etc\/ld\.so|\/lib|\/usr\/lib|\/usr\/share\/locale|\/proc\/|\/sys\/|\/dev\/null|\/dev\/urandom|\/usr\/lib64|\/lib64)/) next
        print p }' | sort -u | head -3)
    [ -n "$bad" ] && why="touched outside the sandbox: $(echo $bad)"
  fi
  if [ -n "$why" ]; then
    fails=$((fails + 1))
    echo "FAIL $name: $why"
    echo "     exit $st, stderr: $(head -c 600 "$d/stderr")"
  else
    echo "ok   $name: exit $st: $(head -c 200 <<<"$msg")"
    rm -rf "$d"
  fi
}

case $mode in
cases)
  while IFS=$'\t' read -r name re args; do
    case $name in ''|'#'*) continue ;; esac
    sandbox "$name" "$corpus/$name"
    # shellcheck disable=SC2086
    check "$name" "$re" 0 $args
  done < "$corpus/cases.txt"
  found=$(dirname "$corpus")/fuzz_found
  if [ -f "$found/cases.txt" ]; then
    while IFS=$'\t' read -r file re args; do
      case $file in ''|'#'*) continue ;; esac
      name=fuzz_${file%.onnx}
      rm -rf "$work/src.$name"; mkdir -p "$work/src.$name"
      cp "$found/$file" "$work/src.$name/model.onnx"
      sandbox "$name" "$work/src.$name"; rm -rf "$work/src.$name"
      # shellcheck disable=SC2086
      check "$name" "$re" 0 $args
    done < "$found/cases.txt"
  fi
  ;;
truncate|flip)
  base=$corpus/base/model.onnx
  size=$(stat -c %s "$base")
  seed=12345
  if [ $mode = truncate ]; then count=$(( (size + 3) / 4 )); else count=200; fi
  for ((i = 0; i < count; i++)); do
    name=$mode.$i
    sandbox "$name" "$corpus/base"
    m=$work/$name/model/model.onnx
    if [ $mode = truncate ]; then
      head -c $((i * 4)) "$base" > "$m"
    else
      for ((k = 0; k <= i % 4; k++)); do
        seed=$(( (seed * 1103515245 + 12345) % 2147483648 )); pos=$(( seed % size ))
        seed=$(( (seed * 1103515245 + 12345) % 2147483648 )); byte=$(( (seed >> 8) % 256 ))
        printf "$(printf '\\%03o' $byte)" | dd of="$m" bs=1 seek=$pos conv=notrunc status=none
      done
    fi
    check "$name" "" 1
  done
  ;;
*) echo "run_corpus.sh: unknown mode $mode"; exit 2 ;;
esac
echo "$mode: $((n - fails)) of $n cases passed"
[ $fails = 0 ]

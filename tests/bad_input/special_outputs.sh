#!/bin/bash
# special_outputs.sh ONNX2CL MODEL EXE WORKDIR — outputs never replace anything but a regular file.
#
# For every kind of path that is not a regular file (character device node — a copy of /dev/null
# made with mknod when running as root —, FIFO, Unix socket, directory, symbolic links to each and
# to a regular file, a dangling link) it runs the compiler's -o (C and executable forms) and
# --stats-json, and the generated executable's --output and --output-dir, and asserts: exit status
# 2, a message naming the path and what it is, the special file still of the same kind afterwards,
# and no file created beside it. MODEL is a Relu model with a symbolic dim (--shape x=2,3);
# EXE is that model compiled, with its weights beside it.
set -u
O2C=$1; MODEL=$2; EXE=$3; W=$4
IN=$(dirname "$MODEL")/x_2x3.npy
rm -rf "$W"; mkdir -p "$W"
export ONNX2CL_CACHE_DIR="$W/cache"
fails=0; n=0

# kind PATH -> one word naming what PATH is now (without following a final symlink)
kind() {
  if [ -L "$1" ]; then echo link; elif [ -c "$1" ]; then echo chardev; elif [ -p "$1" ]; then echo fifo
  elif [ -S "$1" ]; then echo socket; elif [ -d "$1" ]; then echo dir; elif [ -f "$1" ]; then echo file
  else echo none; fi
}

# expect_refused LABEL TARGET REGEX CMD... : CMD must exit 2 naming TARGET, TARGET keeps its kind,
# and the folder holding TARGET gains no entry.
expect_refused() {
  local label=$1 target=$2 re=$3; shift 3
  n=$((n + 1))
  local before after k0 k1 err st
  before=$(ls -A "$(dirname "$target")" | sort | tr '\n' ' ')
  k0=$(kind "$target")
  err=$("$@" 2>&1 >/dev/null); st=$?
  k1=$(kind "$target")
  after=$(ls -A "$(dirname "$target")" | sort | tr '\n' ' ')
  local why=""
  [ "$st" -eq 2 ] || why="exit $st (want 2)"
  grep -Eq -- "$re" <<<"$err" || why="$why; message /$re/ not found"
  grep -Fq -- "$target" <<<"$err" || why="$why; message does not name $target"
  [ "$k0" = "$k1" ] || why="$why; $target changed from $k0 to $k1"
  [ "$before" = "$after" ] || why="$why; folder changed: [$before] -> [$after]"
  if [ -n "$why" ]; then
    echo "FAIL $label: $why"; echo "  stderr: $err"; fails=$((fails + 1))
  else
    echo "ok   $label: $err"
  fi
}

D=$W/t; mkdir -p "$D"
mkfifo "$D/fifo"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$D/sock" 2>/dev/null \
  || echo "note: no Unix socket made (python3 missing); socket case skipped"
mkdir "$D/adir"
echo keep > "$D/regular"
ln -s "$D/fifo" "$D/link_fifo"
ln -s "$D/regular" "$D/link_regular"
ln -s /dev/null "$D/link_null"
ln -s "$D/missing" "$D/link_dangling"
if [ "$(id -u)" = 0 ]; then
  mknod "$D/null" c 1 3 && chmod 666 "$D/null"
else
  echo "note: not root: no copied device node; /dev/null itself is used through a symbolic link only"
fi

targets=""
for t in null fifo sock link_fifo link_regular link_null link_dangling; do
  [ -e "$D/$t" ] || [ -L "$D/$t" ] && targets="$targets $t"
done
for t in $targets; do
  p=$D/$t
  case $t in
    null) re="character device" ;; fifo) re="FIFO" ;; sock) re="socket" ;;
    link_*) re="symbolic link" ;;
  esac
  expect_refused "onnx2cl -o $t (executable)" "$p" "$re" "$O2C" "$MODEL" --shape x=2,3 -o "$p"
  expect_refused "onnx2cl --stats-json $t" "$p" "$re" "$O2C" "$MODEL" --shape x=2,3 -o "$W/s/m.c" --stats-json "$p"
  expect_refused "exe --output y=$t" "$p" "$re" "$EXE" --input x="$IN" --output y="$p"
done
# the C output itself: -o X.c where X.c is special
mkfifo "$D/f.c"
expect_refused "onnx2cl -o fifo.c" "$D/f.c" "FIFO" "$O2C" "$MODEL" --shape x=2,3 -o "$D/f.c"
mkfifo "$D/g.weights"
expect_refused "onnx2cl -o g.c with g.weights a FIFO" "$D/g.weights" "FIFO" "$O2C" "$MODEL" --shape x=2,3 -o "$D/g.c"
mkfifo "$D/h.h"
expect_refused "onnx2cl -o h.c with h.h (the header) a FIFO" "$D/h.h" "FIFO" "$O2C" "$MODEL" --shape x=2,3 -o "$D/h.c"
ln -s /dev/null "$D/e.h"
expect_refused "onnx2cl -o e (executable) with e.h a link to /dev/null" "$D/e.h" "symbolic link" "$O2C" "$MODEL" --shape x=2,3 -o "$D/e"
expect_refused "onnx2cl -o directory" "$D/adir" "directory" "$O2C" "$MODEL" --shape x=2,3 -o "$D/adir"
# --output-dir: a FIFO as the folder, and a FIFO where an output file would go
expect_refused "exe --output-dir fifo" "$D/fifo" "FIFO" "$EXE" --input x="$IN" --output-dir "$D/fifo"
mkdir -p "$D/od"; mkfifo "$D/od/y.npy"
expect_refused "exe --output-dir with y.npy a FIFO" "$D/od/y.npy" "FIFO" "$EXE" --input x="$IN" --output-dir "$D/od"
[ "$(cat "$D/regular")" = keep ] || { echo "FAIL: $D/regular was changed through a symbolic link"; fails=$((fails + 1)); }

# the files a run needs are never outputs: its weights file, its own executable, an input file
# (a copy of the executable, so that a regression cannot damage the fixture); contents unchanged
mkdir -p "$W/own"; cp "$EXE" "$W/own/m"; cp "$EXE.weights" "$W/own/m.weights"; cp "$IN" "$W/own/x.npy"
for t in "m.weights:this model's weights file" "m:this executable" "x.npy:an input file of this run"; do
  f=$W/own/${t%%:*}; cp "$f" "$W/own.keep"
  expect_refused "exe --output y=${t%%:*}" "$f" "${t#*:}" "$W/own/m" --input x="$W/own/x.npy" --output y="$f"
  cmp -s "$f" "$W/own.keep" || { echo "FAIL: $f was overwritten"; fails=$((fails + 1)); }
done
rm -f "$W/own.keep"

# control: the same commands on regular paths succeed (the refusals above are not blanket ones)
mkdir -p "$W/ok"
if "$O2C" "$MODEL" --shape x=2,3 -o "$W/ok/m.c" --stats-json "$W/ok/s.json" 2>/dev/null &&
   "$EXE" --input x="$IN" --output y="$W/ok/y.npy" --output-dir "$W/ok/nested/dir" 2>/dev/null &&
   [ -f "$W/ok/m.c" ] && [ -f "$W/ok/m.h" ] && [ -f "$W/ok/y.npy" ] && [ -f "$W/ok/nested/dir/y.npy" ]; then
  echo "ok   control: regular outputs and a nested --output-dir are written"
else
  echo "FAIL control: regular outputs were not written"; fails=$((fails + 1))
fi
n=$((n + 1))
echo "$((n - fails)) passed, $fails failed"
[ $fails -eq 0 ]

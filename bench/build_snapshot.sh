#!/bin/sh
# build_snapshot.sh — builds onnx2cl (Release) from a committed snapshot, for benchmarking.
#
# What: exports COMMIT (default HEAD) with `git archive` into build-bench/src, configures a
#   Release build in build-bench/obj and builds the onnx2cl target; writes the commit id to
#   build-bench/obj/COMMIT. bench_sd.py uses build-bench/obj/onnx2cl by default.
# Why: the work tree may hold other people's uncommitted, half-written files (sources are
#   globbed per folder), so numbers measured on it would not belong to any commit.
# Assumes: run from anywhere inside the repository; cmake and a C compiler; 2 cores.
# Guarantees: never touches the work tree or the index; exit status non-zero on any failure.
# Usage: sh bench/build_snapshot.sh [COMMIT]
set -eu
root=$(git rev-parse --show-toplevel)
commit=$(git -C "$root" rev-parse "${1:-HEAD}")
src="$root/build-bench/src"
obj="$root/build-bench/obj"
new="$root/build-bench/src.new"
rm -rf "$new"
mkdir -p "$new" "$src" "$obj"
# git archive stamps files with the commit time, which can be older than objects built from
# the previous snapshot: copy only files whose content changed (stamped now), drop removed ones.
git -C "$root" archive "$commit" | tar -x -m -C "$new"
(cd "$new" && find . -type f) | while read -r f; do
    if ! cmp -s "$new/$f" "$src/$f"; then
        mkdir -p "$(dirname "$src/$f")"
        cp "$new/$f" "$src/$f"
    fi
done
(cd "$src" && find . -type f) | while read -r f; do
    [ -e "$new/$f" ] || rm -f "$src/$f"
done
rm -rf "$new"
cmake -S "$src" -B "$obj" -DCMAKE_BUILD_TYPE=Release >"$obj/configure.log" 2>&1 ||
    { tail -20 "$obj/configure.log"; exit 1; }
cmake --build "$obj" --target onnx2cl -j2 >"$obj/build.log" 2>&1 ||
    { tail -30 "$obj/build.log"; exit 1; }
echo "$commit" >"$obj/COMMIT"
echo "built $obj/onnx2cl from $commit"

#!/bin/bash
# expect_error.sh OUTDIR REGEX CMD...   (bad-input test driver)
# Runs CMD (its outputs go to the empty folder OUTDIR) and asserts: exit status 1 or 2 (an error,
# not a crash or a signal), stderr matching the extended regex REGEX, and OUTDIR left empty
# (no partial or temporary file).
set -u
out=$1; re=$2; shift 2
rm -rf "$out"; mkdir -p "$out"
err=$("$@" 2>&1 >/dev/null); st=$?
echo "exit $st: $err"
if [ $st -ne 1 ] && [ $st -ne 2 ]; then echo "FAIL: expected exit status 1 or 2, got $st"; exit 1; fi
if ! grep -Eq -- "$re" <<<"$err"; then echo "FAIL: message does not match /$re/"; exit 1; fi
left=$(ls -A "$out")
if [ -n "$left" ]; then echo "FAIL: files left behind: $left"; exit 1; fi
echo "ok"

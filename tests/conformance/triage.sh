#!/bin/bash
# triage.sh WORK_DIR — proposes list entries from the result.txt files of a conformance run
# (WORK_DIR = <build>/tests/conformance/work). Prints two blocks for a human to review and paste:
#   exclusions.txt candidates: failures that are out of scope by design, recognized by message —
#     ops outside ir/ops.def, non-default domains (training/preview/ml), string /
#     sequence / optional values, training mode, inputs that decide shapes given at run time;
#   known_failures.txt candidates: every other failure, with its verdict and message as the note
#     (a real bug or gap: it must be fixed, not excluded).
# Tests already in either list are left out.
set -euo pipefail
work=${1:?usage: triage.sh WORK_DIR}
here=$(cd "$(dirname "$0")" && pwd)
listed() { grep -v '^#' "$here/exclusions.txt" "$here/known_failures.txt" | awk '{print $1}' | sed 's/^[^:]*://'; }
find "$work" -name result.txt -print0 | xargs -0 cat | sort | awk -F'\t' -v listed="$(listed | tr '\n' ' ')" '
BEGIN { n = split(listed, l, " "); for (i = 1; i <= n; i++) L[l[i]] = 1 }
$2 == "PASS" || $2 == "EXCLUDED" { next }
{
  id = $1; name = id; sub(/.*\//, "", name)
  if (id in L || name in L) next
  m = $6; r = ""
  if (match(m, /unsupported operator .[A-Za-z0-9_]+./)) { op = substr(m, RSTART + 22, RLENGTH - 23); r = "op " op " is not in ir/ops.def" }
  else if (match(m, /unsupported domain .[^ ]+./)) r = "op of domain " substr(m, RSTART + 19, RLENGTH - 20) " (training/preview/ml) is out of scope"
  else if (m ~ /string tensors|to=8 \(string\)|STRING/) r = "string tensors are not supported"
  else if (m ~ /training_mode/) r = "training mode is out of scope (inference compiler)"
  else if (m ~ /cannot read input .* to bind its shape/ || $4 == "0" && m ~ /segmented|more than 8 dims|int32_data has/) r = "sequence/optional/map values are not supported (tensors only)"
  else if (m ~ /must be a constant once shapes are bound|must be constant once shapes are bound/) r = "a shape-deciding input (shape, pads, axis, Range limits) is given at run time; static compilation needs it constant"
  if (r != "") ex[++ne] = sprintf("%-58s %s", id, r)
  else kf[++nk] = sprintf("%-58s %s: %s", id, $2, substr(m, 1, 300))
}
END {
  print "# ---- exclusions.txt candidates (" ne ")"
  for (i = 1; i <= ne; i++) print ex[i]
  print "# ---- known_failures.txt candidates (" nk "): add an owner / issue note to each"
  for (i = 1; i <= nk; i++) print kf[i]
}'

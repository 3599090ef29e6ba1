# case_lib.sh — sourced by the run_*.sh proofs of tests/pipeline (bash).
# case_setup CASES_DIR WORK_DIR: WORK_DIR made empty, with its own engine cache
# ($ONNX2CL_CACHE_DIR = WORK_DIR/cache); $prompt and $negative from CASES_DIR/cases.txt's
# "# prompt: " and "# negative: " lines; fails=0. bad MSG...: prints FAIL MSG, counts it.
case_setup() {
  export ONNX2CL_CACHE_DIR=$2/cache
  rm -rf "$2"
  mkdir -p "$2"
  prompt=$(sed -n 's/^# prompt: //p' "$1/cases.txt")
  negative=$(sed -n 's/^# negative: //p' "$1/cases.txt")
  fails=0
}
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

#!/usr/bin/env bash
# Runs one golden case of the shardpack command line, as zstd's tests/cli-tests do: the case
# tests/cli/cases/NAME.sh prepares what it needs, then runs one command with `run`; its exit status,
# stdout and stderr (timings normalised) must equal tests/cli/cases/NAME.expected.
#
#   tests/cli/run_case.sh SHARDPACK MAKE_IMAGE_TREE NAME            check
#   tests/cli/run_case.sh SHARDPACK MAKE_IMAGE_TREE NAME --update   rewrite NAME.expected
#
# Every case starts in a fresh folder holding `src`: 12 small images in 3 classes (every 4th a PNG)
# and one file that is no image. The figures in the expected files are checked independently of
# shardpack by check_golden_figures.py. ctest runs each case alone (cli/NAME).
set -uo pipefail
shardpack=$(realpath "$1") make_tree=$(realpath "$2") name=$3 update=${4:-}
cases=$(cd "$(dirname "$0")" && pwd)/cases
[[ -f "$cases/$name.sh" ]] || { echo "no case $cases/$name.sh"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
"$make_tree" src --classes 3 --images 12 --png-every 4 --small >/dev/null
printf 'not an image\n' >src/n01440764/notes.txt

failures=0
fail() {
  echo "FAIL: $name: $*"
  failures=$((failures + 1))
}
# Setup steps: must succeed, print nothing.
setup() {
  "$shardpack" "$@" --no-sync --quiet >/dev/null 2>"$work/setup.err" || { echo "setup failed: shardpack $*"; cat "$work/setup.err"; exit 1; }
}
# Flips one byte inside the image of sample 000000001 of the wds dataset in out/: the DALI index's
# second sample (its line 3), second member (the image), 10 bytes into its data.
flip_byte_in_second_image() {
  local offset
  offset=$(awk 'NR == 3 { print $6 + 10 }' out/shard-000000.idx)
  printf '\x42' | dd of=out/shard-000000.tar bs=1 seek="$offset" conv=notrunc status=none
}
# The command under test: `run shardpack ARGS...`, once per case.
ran=0
run() {
  ran=$((ran + 1))
  "$shardpack" "${@:2}" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  {
    echo "\$ shardpack ${*:2}"
    echo "--- exit $rc"
    echo "--- stdout"
    sed -E -e 's/in [0-9.]+ s \([0-9.]+ MB\/s\)/in T s (R MB\/s)/' -e 's/"seconds": [0-9.e+-]+/"seconds": T/' "$work/stdout"
    echo "--- stderr"
    cat "$work/stderr"
  } >"$work/actual"
}

# shellcheck source=/dev/null
source "$cases/$name.sh"
((ran == 1)) || fail "the case must call run exactly once (it called it $ran times)"
if [[ $update == --update ]]; then cp "$work/actual" "$cases/$name.expected"; fi
diff -u "$cases/$name.expected" "$work/actual" || fail "output differs from $name.expected"
((failures == 0)) && echo "ok: $name"
((failures == 0))

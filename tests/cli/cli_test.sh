#!/usr/bin/env bash
# Golden tests of the shardpack command line: each case runs one command and compares its exit
# status, stdout and stderr (timings and the temporary folder normalised) with
# tests/cli/expected/<case>.txt.
# Usage: cli_test.sh SHARDPACK MAKE_IMAGE_TREE [--update]
set -uo pipefail
shardpack=$(realpath "$1") make_tree=$(realpath "$2") update=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

"$make_tree" src --classes 3 --images 12 --png-every 4 --small
printf 'not an image\n' >src/n01440764/notes.txt

passed=0 failed=0
run_case() {
  local name=$1
  shift
  "$@" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  local actual="$work/$name.actual"
  {
    echo "\$ shardpack ${*:2}"
    echo "--- exit $rc"
    echo "--- stdout"
    sed -E 's/in [0-9.]+ s \([0-9.]+ MB\/s\)/in T s (R MB\/s)/' "$work/stdout"
    echo "--- stderr"
    cat "$work/stderr"
  } >"$actual"
  if [[ $update == --update ]]; then cp "$actual" "$here/expected/$name.txt"; fi
  if diff -u "$here/expected/$name.txt" "$actual"; then
    passed=$((passed + 1))
  else
    echo "FAIL: $name"
    failed=$((failed + 1))
  fi
}

run_case no_command "$shardpack"
run_case pack_missing_source "$shardpack" pack missing out
run_case pack_raw_without_crop "$shardpack" pack src out --format raw
run_case pack_bad_crop "$shardpack" pack src out --format raw --crop 224x
run_case pack_bad_size "$shardpack" pack src out --shard-size 12XB
run_case pack_negative_threads "$shardpack" pack src out --threads -1
run_case pack_into_source "$shardpack" pack src src/n01440764/packed
if [[ -e src/n01440764/packed ]]; then
  echo "FAIL: pack_into_source left src/n01440764/packed behind"
  failed=$((failed + 1))
fi
run_case pack_strict "$shardpack" pack src strict --strict --no-sync
run_case pack "$shardpack" pack src out --samples-per-shard 5 --no-sync
run_case pack_into_nonempty "$shardpack" pack src out
run_case verify_clean "$shardpack" verify out --decode
run_case stat "$shardpack" stat out
run_case stat_json "$shardpack" stat out --json
run_case convert_to_lmdb "$shardpack" convert out lmdb --format lmdb --no-sync
run_case verify_lmdb "$shardpack" verify lmdb
run_case pack_raw "$shardpack" pack src raw --format raw --resize 20 --crop 16x12 --compress zstd --chunk-samples 4 --no-sync --quiet
run_case stat_raw "$shardpack" stat raw
run_case convert_raw_refused "$shardpack" convert raw again
# Flip one byte inside the image of sample 000000001 (second line of the DALI index, second member).
offset=$(awk 'NR == 3 { print $6 + 10 }' out/shard-000000.idx)
printf '\x42' | dd of=out/shard-000000.tar bs=1 seek="$offset" conv=notrunc status=none
run_case verify_flipped_byte "$shardpack" verify out
run_case verify_flipped_byte_json "$shardpack" verify out --json
run_case verify_not_a_dataset "$shardpack" verify src

echo "$passed passed, $failed failed"
((failed == 0))

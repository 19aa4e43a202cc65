#!/usr/bin/env bash
# TFRecord to WebDataset (issue 62; target: at least 3x the baseline): `shardpack convert` of the
# medium tree's images as TFRecord files (20,000 JPEGs in 16 files, as TF's ImageNet tools lay them
# out) against the script a user would write, the `tfrecord` package's reader into webdataset's
# ShardWriter (scripts/bench_tfrecord.py). Both write tar shards of 1,000 samples with the image,
# the label and the other features into --out (default: the work folder; /dev/shm takes the disk's
# write-back out, which at 2 GB of output sets both sides' pace); the page cache holds the input for
# both. The runs alternate; medians of R runs.
#
#   scripts/bench-tfrecord.sh [--images N] [--runs R] [--out DIR] [--work DIR] [--bin DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
images=20000 runs=3 work=build/bench bin= out=
usage="$0 [--images N] [--runs R] [--out DIR] [--work DIR] [--bin DIR]"
# shellcheck source=scripts/bench-args.sh
source scripts/bench-args.sh "$@"
out=${out:-$work}
src=$work/pack-tree-$images
scripts/bench-tree.sh "$bin" "$src" --classes 100 --images "$images" --png-every 0 --noise 46
tfr=$work/tfrecord-$images
if [[ ! -d $tfr ]]; then
  "$py" scripts/bench_tfrecord.py write "$src" "$tfr.tmp" 16
  mv "$tfr.tmp" "$tfr"
fi
cat "$tfr"/* >/dev/null  # in the page cache for both sides
now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ours=() loop=()
for ((r = 1; r <= runs; r++)); do
  rm -rf "$out/tfr-convert" "$out/tfr-loop"
  t0=$(now); "$bin/shardpack" convert "$tfr" "$out/tfr-convert" --format wds --samples-per-shard 1000 --quiet --no-sync >/dev/null; t1=$(now)
  ours+=("$(echo "$t1 - $t0" | bc)")
  t0=$(now); n=$("$py" scripts/bench_tfrecord.py loop "$tfr" "$out/tfr-loop"); t1=$(now)
  loop+=("$(echo "$t1 - $t0" | bc)")
  [[ $n == "$images" ]] || { echo "the baseline wrote $n samples, not $images" >&2; exit 1; }
  printf 'run %d: shardpack convert %.2f s; the Python loop %.2f s\n' "$r" "${ours[-1]}" "${loop[-1]}"
done
"$bin/shardpack" verify "$out/tfr-convert" >/dev/null
rm -rf "$out/tfr-loop"
o=$(median "${ours[@]}") l=$(median "${loop[@]}")
printf 'TFRecord (%d images, %s) to wds in %s: shardpack convert %.2f s, the Python loop %.2f s (medians of %d): %.1fx\n' \
  "$images" "$(du -sh "$tfr" | cut -f1)" "$out" "$o" "$l" "$runs" "$(echo "$l / $o" | bc -l)"

#!/usr/bin/env bash
# MDS, LitData and Parquet (issue 62). For each, on the medium tree's 20,000 JPEGs written by the
# format's own writer (Streaming's MDSWriter, litdata.optimize: uncompressed, 64 MB shards; the
# `datasets` library's to_parquet in the Hub's layout: scripts/bench_mds.py):
#  1. convert to wds (target: at least 3x): `shardpack convert` against the script a user would
#     write, the format's own reader into webdataset's ShardWriter, both into --out (default: the
#     work folder), tar shards of 1,000 samples with the image, the label and the filename.
#     Alternating runs, medians.
#  2. the loader in place (target: at least 0.9x for MDS and Parquet): `shardpack bench` (random-resized crop
#     224, all cores, one epoch) over the folder against the same images in shardpack's own wds
#     shards (the convert output of 1.). Alternating runs, medians of images/s.
# The page cache holds the inputs for both sides. Then, for Parquet:
#  3. the first batch over 10,000 Parquet files (target: within 10 s): shardpack.Loader's time from
#     its construction to its first batch (64 images, crop 224), the page cache holding the files.
# BENCH_FORMATS (default "mds litdata parquet") picks the formats.
#
#   scripts/bench-mds.sh [--images N] [--runs R] [--out DIR] [--work DIR] [--bin DIR]
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
now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
rate() { "$bin/shardpack" bench "$1" --crop 224 --epochs 1 --json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["images_per_s"])'; }

for fmt in ${BENCH_FORMATS:-mds litdata parquet}; do
  data=$work/$fmt-$images
  if [[ ! -d $data ]]; then
    rm -rf "$data.tmp"
    "$py" scripts/bench_mds.py write "$fmt" "$src" "$data.tmp" >/dev/null
    mv "$data.tmp" "$data"
  fi
  find "$data" -type f -exec cat {} + >/dev/null  # in the page cache for both sides
  ours=() loop=()
  for ((r = 1; r <= runs; r++)); do
    rm -rf "$out/$fmt-convert" "$out/$fmt-loop"
    t0=$(now); "$bin/shardpack" convert "$data" "$out/$fmt-convert" --format wds --samples-per-shard 1000 --quiet --no-sync >/dev/null; t1=$(now)
    ours+=("$(echo "$t1 - $t0" | bc)")
    t0=$(now); n=$("$py" scripts/bench_mds.py loop "$fmt" "$data" "$out/$fmt-loop" 2>/dev/null | tail -1); t1=$(now)
    loop+=("$(echo "$t1 - $t0" | bc)")
    [[ $n == "$images" ]] || { echo "the $fmt baseline wrote $n samples, not $images" >&2; exit 1; }
    printf '%s convert run %d: shardpack convert %.2f s; the Python loop %.2f s\n' "$fmt" "$r" "${ours[-1]}" "${loop[-1]}"
  done
  "$bin/shardpack" verify "$out/$fmt-convert" >/dev/null
  rm -rf "$out/$fmt-loop"
  o=$(median "${ours[@]}") l=$(median "${loop[@]}")
  printf '%s (%d images, %s) to wds in %s: shardpack convert %.2f s, the Python loop %.2f s (medians of %d): %.1fx\n' \
    "$fmt" "$images" "$(du -sh "$data" | cut -f1)" "$out" "$o" "$l" "$runs" "$(echo "$l / $o" | bc -l)"

  in_place=() wds=()
  for ((r = 1; r <= runs; r++)); do
    in_place+=("$(rate "$data")")
    wds+=("$(rate "$out/$fmt-convert")")
    printf '%s loader run %d: in place %.0f images/s; wds %.0f images/s\n' "$fmt" "$r" "${in_place[-1]}" "${wds[-1]}"
  done
  m=$(median "${in_place[@]}") w=$(median "${wds[@]}")
  printf '%s loader (random-resized crop 224, %s cores): in place %.0f images/s, the same images in wds %.0f images/s (medians of %d): %.2fx\n' \
    "$fmt" "$(nproc)" "$m" "$w" "$runs" "$(echo "$m / $w" | bc -l)"
done

if [[ " ${BENCH_FORMATS:-parquet} " == *" parquet "* ]]; then
  many=$work/parquet-10000-files
  firsts=()
  for ((r = 1; r <= runs; r++)); do
    firsts+=("$(PYTHONPATH=$bin/python "$py" scripts/bench_mds.py first-batch 10000 "$src" "$many" | tail -1)")
    printf 'parquet first batch run %d: %.2f s\n' "$r" "${firsts[-1]}"
  done
  printf 'parquet, 10,000 files of 2 images: the first batch of shardpack.Loader in %.2f s (median of %d; target 10 s)\n' \
    "$(median "${firsts[@]}")" "$runs"
fi

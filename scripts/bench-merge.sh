#!/usr/bin/env bash
# shardpack merge on a dataset of 10,000 shards packed in 8 parts (one sample a shard, from a
# generated tree of small images): merge reads the 8 part manifests only, so it must take well
# under a second. Baseline in the same run: reading the same part manifests with cat. Medians of R
# runs.
#
#   scripts/bench-merge.sh [--shards N] [--parts P] [--runs R] [--work DIR] [--bin DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
shards=10000 parts=8 runs=5 work=build/bench bin=build/release
while (($#)); do
  case $1 in
    --shards) shards=$2; shift 2 ;;
    --parts) parts=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "usage: $0 [--shards N] [--parts P] [--runs R] [--work DIR] [--bin DIR]" >&2; exit 2 ;;
  esac
done
src=$work/merge-tree-$shards
scripts/bench-tree.sh "$bin" "$src" --classes 10 --images "$shards" --small --png-every 0
out=$work/merge-parts
rm -rf "$out"
for ((i = 0; i < parts; i++)); do
  "$bin/shardpack" pack "$src" "$out" --samples-per-shard 1 --partition "$i/$parts" --quiet --no-sync >/dev/null
done
now() { date +%s.%N; }
merge_s=() cat_s=()
for ((r = 1; r <= runs; r++)); do
  rm -f "$out/manifest.json"
  sync
  t0=$(now); "$bin/shardpack" merge "$out" >/dev/null; t1=$(now)
  cat "$out"/part-*-of-*.json >/dev/null; t2=$(now)
  merge_s+=("$(echo "$t1 - $t0" | bc)") cat_s+=("$(echo "$t2 - $t1" | bc)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
shards_listed=$("$py" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['shardlist']))" "$out/manifest.json")
printf 'merge of %d parts, %d shards: %.3f s (median of %d); cat of the part manifests: %.3f s\n' \
  "$parts" "$shards_listed" "$(median "${merge_s[@]}")" "$runs" "$(median "${cat_s[@]}")"

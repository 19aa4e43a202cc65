#!/usr/bin/env bash
# Views (issue 42): how long `shardpack split` takes to make a held-out split of the medium tree's
# dataset (20,000 images, 100 classes; target: under a second), and how fast the loader reads a
# view against the dataset itself (the baseline: the same loader, the same options, the base
# folder; target: at least 0.97x). The view read is the split's larger side (95% of the samples),
# so that both read nearly the same shards. The runs alternate base and view; medians of R runs.
#
#   scripts/bench-views.sh [--images N] [--runs R] [--seconds S] [--work DIR] [--bin DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
images=20000 runs=5 seconds=4 work=build/bench bin=
usage="$0 [--images N] [--runs R] [--seconds S] [--work DIR] [--bin DIR]"
args=()
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
# shellcheck source=scripts/bench-args.sh
source scripts/bench-args.sh "${args[@]}"
src=$work/pack-tree-$images
scripts/bench-tree.sh "$bin" "$src" --classes 100 --images "$images" --png-every 0 --noise 46
base=$work/views-base
if [[ ! -f $base/manifest.json ]]; then
  rm -rf "$base"
  "$bin/shardpack" pack "$src" "$base" --quiet --no-sync >/dev/null
fi
now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
rate() { "$bin/shardpack" bench "$1" --seconds "$seconds" --json 2>/dev/null | "$py" -c 'import json,sys; print(json.load(sys.stdin)["images_per_s"])'; }
split_s=() base_rate=() view_rate=()
for ((r = 1; r <= runs; r++)); do
  rm -rf "$work/views-val" "$work/views-train"
  t0=$(now); "$bin/shardpack" split "$base" "$work/views-val" "$work/views-train" --fraction 0.05 --seed "$r" --json >/dev/null; t1=$(now)
  split_s+=("$(echo "$t1 - $t0" | bc)")
  base_rate+=("$(rate "$base")") view_rate+=("$(rate "$work/views-train")")
  printf 'run %d: split %.3f s; loader over the base %.0f images/s, over the view %.0f images/s\n' \
    "$r" "${split_s[-1]}" "${base_rate[-1]}" "${view_rate[-1]}"
done
"$bin/shardpack" verify "$work/views-val" >/dev/null
s=$(median "${split_s[@]}") b=$(median "${base_rate[@]}") v=$(median "${view_rate[@]}")
printf 'split of a dataset of %d images: %.3f s (median of %d)\n' "$images" "$s" "$runs"
printf 'loader over the 95%% view: %.0f images/s; over the base: %.0f images/s (medians of %d, %s s each): %.3fx\n' \
  "$v" "$b" "$runs" "$seconds" "$(echo "$v / $b" | bc -l)"

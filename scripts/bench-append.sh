#!/usr/bin/env bash
# shardpack append (issue 42): adding 1% to the medium tree's dataset against packing that 1% alone
# (the baseline: the same images, the same options, a fresh folder). The ratio shows what appending
# costs beyond packing the new images (reading and checking the dataset's manifest, staging,
# moving the shards in, the new manifest). The runs alternate; each append starts from a fresh copy
# of the dataset (copied outside the timing). Medians of R runs.
#
#   scripts/bench-append.sh [--images N] [--runs R] [--work DIR] [--bin DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
images=20000 runs=5 work=build/bench bin=
usage="$0 [--images N] [--runs R] [--work DIR] [--bin DIR]"
# shellcheck source=scripts/bench-args.sh
source scripts/bench-args.sh "$@"
src=$work/pack-tree-$images
added=$work/append-tree-$((images / 100))
scripts/bench-tree.sh "$bin" "$src" --classes 100 --images "$images" --png-every 0 --noise 46
scripts/bench-tree.sh "$bin" "$added" --classes 100 --images $((images / 100)) --png-every 0 --noise 46 --seed 2
base=$work/append-base
if [[ ! -f $base/manifest.json ]]; then
  rm -rf "$base"
  "$bin/shardpack" pack "$src" "$base" --quiet --no-sync >/dev/null
fi
now() { date +%s.%N; }
append_s=() pack_s=()
for ((r = 1; r <= runs; r++)); do
  rm -rf "$work/append-copy" "$work/append-alone"
  cp -a "$base" "$work/append-copy"
  sync
  t0=$(now); "$bin/shardpack" append "$work/append-copy" "$added" --quiet --no-sync >/dev/null; t1=$(now)
  "$bin/shardpack" pack "$added" "$work/append-alone" --quiet --no-sync >/dev/null; t2=$(now)
  append_s+=("$(echo "$t1 - $t0" | bc)") pack_s+=("$(echo "$t2 - $t1" | bc)")
  printf 'run %d: append %.3f s, pack alone %.3f s\n' "$r" "${append_s[-1]}" "${pack_s[-1]}"
done
"$bin/shardpack" verify "$work/append-copy" >/dev/null
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
a=$(median "${append_s[@]}") p=$(median "${pack_s[@]}")
printf 'append of %d images to a dataset of %d: %.3f s; packing them alone: %.3f s (medians of %d): %.2fx\n' \
  "$((images / 100))" "$images" "$a" "$p" "$runs" "$(echo "$a / $p" | bc -l)"

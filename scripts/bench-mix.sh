#!/usr/bin/env bash
# Mixing datasets against one dataset of the same images, in the same run (docs/mixing.md):
#  - the loader over a 70/30 mixture of two local wds datasets (the tree's classes 0-6 and 7-9)
#    against the loader over one wds dataset of the whole tree, same options (`shardpack bench`,
#    random-resized-crop 224 + flip, every core, 2 epochs), runs alternated, medians compared;
#  - the shuffle-quality statistic (shardpack bench's shuffle_quality; ops/diagnose/shuffle_quality.h)
#    of a dataset of 50,000 small images packed in class order (sorted shards: what a buffer shuffle
#    mixes badly) for the global shuffle and buffers of 1,000 and 10,000, and of a 70/30 mixture of
#    its classes, each beside the ideal (a uniformly random order).
#
#   scripts/bench-mix.sh [--images N] [--runs R] [--work DIR] [--bin DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
images=4000 runs=3 work=build/bench bin=
usage="$0 [--images N] [--runs R] [--work DIR] [--bin DIR]"
source scripts/bench-args.sh "$@"
src=$work/mix-tree-$images
scripts/bench-tree.sh "$bin" "$src" --classes 10 --images "$images" --png-every 0 --noise 46
# make_datasets TREE NAME FIRST PER_SHARD: packs TREE whole into $work/NAME-all, and its first FIRST
# classes and the rest into $work/NAME-a and $work/NAME-b (their trees: hard links to TREE's files).
make_datasets() {
  local tree=$1 name=$2 first=$3 per_shard=$4 n=0
  rm -rf "$work/$name"-{a-src,b-src,all,a,b}
  mkdir -p "$work/$name-a-src" "$work/$name-b-src"
  for d in $(ls -d "$tree"/*/ | sort); do
    n=$((n + 1))
    if ((n <= first)); then cp -al "$d" "$work/$name-a-src/"; else cp -al "$d" "$work/$name-b-src/"; fi
  done
  for part in all a b; do
    local from=$tree
    [[ $part == all ]] || from=$work/$name-$part-src
    $bin/shardpack pack "$from" "$work/$name-$part" --samples-per-shard "$per_shard" --quiet --no-sync >/dev/null
  done
}
# Classes 0-6 and 7-9: 70% and 30% of the images.
make_datasets "$src" mix 7 50
cat "$work"/mix-all/*.tar "$work"/mix-a/*.tar "$work"/mix-b/*.tar >/dev/null
count() { find "$1" -mindepth 2 -type f | wc -l; }
echo "sources: $(count "$work/mix-a-src") + $(count "$work/mix-b-src") images; one dataset: $(count "$src")"
options=(--crop 224 --batch 64 --epochs 2 --json)
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
field() { "$py" -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }
one=() mix=()
for ((r = 1; r <= runs; r++)); do
  $bin/shardpack bench "$work/mix-all" "${options[@]}" >"$work/mix-one.json"
  $bin/shardpack bench --source "$work/mix-a" 0.7 --source "$work/mix-b" 0.3 "${options[@]}" >"$work/mix-mix.json"
  one+=("$(field "$work/mix-one.json" "['images_per_s']")")
  mix+=("$(field "$work/mix-mix.json" "['images_per_s']")")
  printf 'run %d: one dataset %.0f images/s, 70/30 mixture %.0f images/s\n' "$r" "${one[-1]}" "${mix[-1]}"
done
m1=$(median "${one[@]}") m2=$(median "${mix[@]}")
printf 'median: one dataset %.0f images/s, mixture %.0f images/s: ratio %.3f (target >= 0.95)\n' "$m1" "$m2" \
  "$("$py" -c "print($m2 / $m1)")"
# Shuffle quality, on larger datasets of small images (the statistic needs only the manifests, so
# each bench runs for a second): the one dataset packed in class order (sorted shards) and the
# 70/30 mixture of its classes 0-69 and 70-99, 100 samples per shard.
qsrc=$work/mix-quality-tree
scripts/bench-tree.sh "$bin" "$qsrc" --classes 100 --images 50000 --small --png-every 0
make_datasets "$qsrc" mix-q 70 100
quick=(--crop 32 --batch 256 --seconds 1 --json)
$bin/shardpack bench "$work/mix-q-all" "${quick[@]}" >"$work/mix-q-one.json"
$bin/shardpack bench --source "$work/mix-q-a" 0.7 --source "$work/mix-q-b" 0.3 "${quick[@]}" >"$work/mix-q-mix.json"
for name in one mix; do
  "$py" - "$work/mix-q-$name.json" "$name" <<'PY'
import json, sys
q = json.load(open(sys.argv[1]))["shuffle_quality"]
what = "one dataset (classes in order)" if sys.argv[2] == "one" else "70/30 mixture (stratified)"
buffers = ", ".join(f"buffer {k}: {v:.3f}" for k, v in q["buffers"].items())
print(f"shuffle quality, batch 256, {what}, {q['shards']} shards: this order {q['loader']:.3f}, "
      f"global {q['global']:.3f}, {buffers}; ideal {q['ideal']:.3f}")
PY
done

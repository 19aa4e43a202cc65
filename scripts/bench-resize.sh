#!/usr/bin/env bash
# pack --max-side against a baseline measured in the same run, on the same generated tree of
# camera-like JPEGs (2-12 MP as made by make_image_tree --scale, noisy photographic-like content):
#  (a) `shardpack pack --max-side 512` against a Python pool doing the same job the way img2dataset
#      does (scripts/bench_pil_resize.py: PIL with draft, BOX resize, save at the same quality, a
#      process per core, tar shards), both writing tar shards, neither syncing; runs alternated;
#  (b) `shardpack bench --crop 224` over the bounded dataset against the dataset packed without a
#      bound (same images, same options, every core);
#  (c) bytes on disk before and after.
#
#   scripts/bench-resize.sh [--images N] [--runs R] [--work DIR] [--bin DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
images=120 runs=3 work=build/bench bin=
usage="$0 [--images N] [--runs R] [--work DIR] [--bin DIR]"
source scripts/bench-args.sh "$@"
cores=$(nproc)
# Half the images at --scale 4 (about 3 MP), half at --scale 6 (about 6.5 MP): 2-12 MP in all.
src=$work/resize-tree-$images
if [[ ! -f $src/.complete ]]; then
  rm -rf "$src"
  scripts/bench-tree.sh "$bin" "$src-a" --classes 4 --images $((images / 2)) --png-every 0 --noise 46 --scale 4
  scripts/bench-tree.sh "$bin" "$src-b" --classes 4 --images $((images / 2)) --png-every 0 --noise 46 --scale 6 --seed 2
  mkdir -p "$src"
  for d in "$src-a"/*/; do
    c=$(basename "$d")
    mkdir -p "$src/$c"
    for f in "$d"*; do ln "$f" "$src/$c/a_$(basename "$f")"; done
    for f in "$src-b/$c/"*; do ln "$f" "$src/$c/b_$(basename "$f")"; done
  done
  touch "$src/.complete"
fi
"$py" -c "
import glob, sys
from PIL import Image
mp = sorted(Image.open(f).size[0] * Image.open(f).size[1] / 1e6 for f in glob.glob(sys.argv[1] + '/*/*'))
print(f'{len(mp)} JPEGs, {mp[0]:.1f}-{mp[-1]:.1f} MP, median {mp[len(mp) // 2]:.1f} MP')" "$src"
cat "$src"/*/* >/dev/null
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ours=() theirs=()
for ((r = 1; r <= runs; r++)); do
  rm -rf "$work/resize-ours" "$work/resize-pil"
  start=$(date +%s.%N)
  $bin/shardpack pack "$src" "$work/resize-ours" --max-side 512 --jpeg-quality 90 --no-sync --quiet >/dev/null
  end=$(date +%s.%N)
  ours+=("$("$py" -c "print($images / ($end - $start))")")
  theirs+=("$("$py" scripts/bench_pil_resize.py "$src" "$work/resize-pil" 512 90 "$cores")")
  printf 'run %d: shardpack pack --max-side 512 %.1f images/s, PIL pool (%d processes) %.1f images/s\n' "$r" \
    "${ours[-1]}" "$cores" "${theirs[-1]}"
done
m1=$(median "${ours[@]}") m2=$(median "${theirs[@]}")
printf '(a) median: shardpack %.1f images/s, PIL pool %.1f images/s: %.2fx (target >= 1.3x)\n' "$m1" "$m2" \
  "$("$py" -c "print($m1 / $m2)")"
rm -rf "$work/resize-full"
$bin/shardpack pack "$src" "$work/resize-full" --no-sync --quiet >/dev/null
full=() bounded=()
for ((r = 1; r <= runs; r++)); do
  full+=("$($bin/shardpack bench "$work/resize-full" --crop 224 --json | "$py" -c "import json,sys; print(json.load(sys.stdin)['images_per_s'])")")
  bounded+=("$($bin/shardpack bench "$work/resize-ours" --crop 224 --json | "$py" -c "import json,sys; print(json.load(sys.stdin)['images_per_s'])")")
  printf 'run %d: bench --crop 224: unbounded %.1f images/s, bounded %.1f images/s\n' "$r" "${full[-1]}" "${bounded[-1]}"
done
b1=$(median "${bounded[@]}") b2=$(median "${full[@]}")
printf '(b) median: bounded %.1f images/s, unbounded %.1f images/s: %.2fx (target >= 3x)\n' "$b1" "$b2" \
  "$("$py" -c "print($b1 / $b2)")"
printf '(c) bytes on disk: source tree %s, unbounded wds %s, bounded wds %s, PIL baseline %s\n' \
  "$(du -sh --apparent-size "$src" | cut -f1)" "$(du -sh --apparent-size "$work/resize-full" | cut -f1)" \
  "$(du -sh --apparent-size "$work/resize-ours" | cut -f1)" "$(du -sh --apparent-size "$work/resize-pil" | cut -f1)"

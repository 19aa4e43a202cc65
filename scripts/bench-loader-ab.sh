#!/usr/bin/env bash
# The loader's speed, one build against another, alternating in one run (these machines are shared
# and noisy: a ratio of runs taken side by side means more than two figures taken apart):
# `shardpack bench` (random-resized-crop 224 + flip, batches of --batch, 2 threads, 2 epochs) over one
# WebDataset of the read benchmark's tree (scripts/bench-read.sh) and over a 70/30 mixture of its
# classes 0-69 and 70-99, A then B each round; prints every run and the ratios of the medians (B / A),
# and how busy the loader kept its threads (bench's cores_busy: read + decode seconds / (seconds x
# threads)).
#
#   scripts/bench-loader-ab.sh --a DIR --b DIR [--images N] [--runs R] [--work DIR]
#                              [--scale S] [--turned-every T] [--batch B] [--buckets SPEC]
# --scale and --turned-every go to make_image_tree (photo-sized images; every T-th JPEG stored
# sideways with an EXIF orientation, as phones store portraits); the B build makes the tree. --batch:
# images per batch (64; photo-sized images are trained in small batches, e.g. 8). --buckets: aspect-
# ratio buckets (bench's --buckets, e.g. sdxl, as photos are trained for diffusion models) instead of
# the square random-resized-crop.
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
images=4000 runs=5 work=build/bench a='' b='' scale=1 turned=0 batch=64 buckets=''
while (($#)); do
  case $1 in
    --a) a=$2; shift 2 ;;
    --b) b=$2; shift 2 ;;
    --images) images=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --turned-every) turned=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --buckets) buckets=$2; shift 2 ;;
    *) echo "usage: $0 --a DIR --b DIR [--images N] [--runs R] [--work DIR] [--scale S] [--turned-every T] [--batch B] [--buckets SPEC]" >&2; exit 2 ;;
  esac
done
[[ -x $a/shardpack && -x $b/shardpack ]] || { echo "$0: --a and --b name build folders holding shardpack" >&2; exit 2; }
tag=$images tree=(--classes 100 --images "$images" --png-every 0 --noise 46)
if [[ $scale != 1 || $turned != 0 ]]; then
  tag+="-scale$scale-turned$turned" tree+=(--scale "$scale" --turned-every "$turned")
fi
src=$work/read-tree-$tag
scripts/bench-tree.sh "$b" "$src" "${tree[@]}"
ab=$work/loader-ab-$tag
if [[ ! -f $ab/.complete ]]; then
  rm -rf "$ab"
  mkdir -p "$ab/a-src" "$ab/b-src"
  n=0
  for d in $(ls -d "$src"/*/ | sort); do
    n=$((n + 1))
    if ((n <= 70)); then cp -al "$d" "$ab/a-src/"; else cp -al "$d" "$ab/b-src/"; fi
  done
  # Packed by the older build, so that both read the same files.
  "$a/shardpack" pack "$src" "$ab/all" --shuffle --quiet --no-sync >/dev/null
  "$a/shardpack" pack "$ab/a-src" "$ab/a" --shuffle --quiet --no-sync >/dev/null
  "$a/shardpack" pack "$ab/b-src" "$ab/b" --shuffle --quiet --no-sync >/dev/null
  touch "$ab/.complete"
fi
cat "$ab"/all/*.tar "$ab"/a/*.tar "$ab"/b/*.tar >/dev/null
options=(--batch "$batch" --threads 2 --epochs 2 --json)
if [[ -n $buckets ]]; then options+=(--buckets "$buckets"); else options+=(--crop 224); fi
# images/s and the share of the threads' time the cores were busy (bench's cores_busy).
rate() { "$py" -c "import json,sys; r = json.load(sys.stdin); print(r['images_per_s'], r.get('cores_busy', 0))"; }
calc() { "$py" -c "print($1)"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A got
for ((r = 1; r <= runs; r++)); do
  for side in a b; do
    bin=${!side}
    read -r one one_busy < <("$bin/shardpack" bench "$ab/all" "${options[@]}" | rate)
    read -r mix mix_busy < <("$bin/shardpack" bench --source "$ab/a" 0.7 --source "$ab/b" 0.3 "${options[@]}" | rate)
    got[$side-one]+="$one " got[$side-mix]+="$mix " got[$side-one-busy]+="$one_busy " got[$side-mix-busy]+="$mix_busy "
    printf 'run %d, %s (%s): one dataset %.0f images/s (cores busy %.1f%%), 70/30 mixture %.0f images/s (%.1f%%)\n' \
      "$r" "$side" "$bin" "$one" "$(calc "100 * $one_busy")" "$mix" "$(calc "100 * $mix_busy")"
  done
done
for what in one mix; do
  # shellcheck disable=SC2086
  ma=$(median ${got[a-$what]}) mb=$(median ${got[b-$what]})
  # shellcheck disable=SC2086
  ba=$(median ${got[a-$what-busy]}) bb=$(median ${got[b-$what-busy]})
  printf '%s: medians of %d, A %.0f images/s (cores busy %.1f%%), B %.0f images/s (%.1f%%): B/A %.3f\n' \
    "$([[ $what == one ]] && echo "one dataset" || echo "70/30 mixture")" "$runs" "$ma" "$(calc "100 * $ba")" \
    "$mb" "$(calc "100 * $bb")" "$(calc "$mb / $ma")"
done

#!/usr/bin/env bash
# Samples with captions (issue 16), against the same images alone, measured in the same run and
# alternating (the machines are shared and noisy, so only the ratios mean anything):
#  - pack: an image-caption tree of N pairs against the tree of the N images alone (both wds,
#    --no-sync), as the ratio of the medians and of the fastest runs;
#  - load: `shardpack bench --fields txt` on the packed pairs against `shardpack bench` on the
#    images alone (images/s, random-resized-crop to 224, all cores).
#
#   scripts/bench-fields.sh [--images N] [--runs R] [--seconds S] [--work DIR] [--bin DIR]
#
# The image tree is scripts/bench-pack.sh's (generated once, cached in DIR); the caption tree is a
# hard-linked copy of it plus one caption of 40 to 120 bytes (UTF-8, like LAION's) per image.
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)

images=20000 runs=5 seconds=8 work=build/bench bin=
while (($#)); do
  case $1 in
    --images) images=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "usage: $0 [--images N] [--runs R] [--seconds S] [--work DIR] [--bin DIR]" >&2; exit 2 ;;
  esac
done
if [[ -z $bin ]]; then
  scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
  bin=build/release
fi
mkdir -p "$work"
src=$work/tree-$images
scripts/bench-tree.sh "$bin" "$src" --classes 100 --images "$images" --png-every 0 --noise 46
pairs=$work/tree-$images-captions
if [[ ! -f $pairs/.complete ]]; then
  echo "adding captions in $pairs ..."
  rm -rf "$pairs"
  cp -al "$src" "$pairs"
  rm -f "$pairs/.complete"
  "$py" - "$pairs" <<'EOF'
import os, random, sys
root = sys.argv[1]
rng = random.Random(16)
words = "a photo of the small large red blue dog cat bird on in near beach street garden café naïve".split()
for folder in sorted(os.listdir(root)):
    for name in sorted(os.listdir(os.path.join(root, folder))):
        caption = " ".join(rng.choice(words) for _ in range(rng.randrange(8, 24)))[:120]
        with open(os.path.join(root, folder, name.split(".")[0] + ".txt"), "w", encoding="utf-8") as f:
            f.write(caption)
EOF
  touch "$pairs/.complete"
fi
find "$src" "$pairs" -type f -exec cat {} + >/dev/null  # warm the page cache

# As in scripts/bench-pack.sh: each timed command starts right after touching and freeing more memory
# than it will write, so that no contender gets pages the host took back (docs/performance.md,
# "Memory the host took back"), and after earlier runs' dirty pages are flushed.
bytes=$(du -sb --exclude=.complete "$src" | cut -f1)
avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
warm_bytes=$((bytes + (512 << 20)))
if ((warm_bytes > avail_kb * 1024 / 2)); then warm_bytes=$((avail_kb * 1024 / 2)); fi
warm_memory() { "$py" -c "bytearray($warm_bytes)"; }

seconds_of() {  # wall seconds of "$@"
  sync
  warm_memory
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
rate_of() {  # images/s of a loader bench
  $bin/shardpack bench "$@" --seconds "$seconds" --json | "$py" -c 'import json, sys; print(json.load(sys.stdin)["images_per_s"])'
}

alone=() with=() load_alone=() load_with=()
pack_alone() { rm -rf "$work/out-alone" "$work/out-pairs"; seconds_of $bin/shardpack pack "$src" "$work/out-alone" --no-sync --quiet; }
pack_pairs() { rm -rf "$work/out-alone" "$work/out-pairs"; seconds_of $bin/shardpack pack "$pairs" "$work/out-pairs" --no-sync --quiet; }
for ((r = 1; r <= runs; r++)); do
  if ((r % 2)); then
    alone+=("$(pack_alone)")
    with+=("$(pack_pairs)")
  else
    with+=("$(pack_pairs)")
    alone+=("$(pack_alone)")
  fi
  echo "run $r: pack images ${alone[-1]} s, pack image-caption pairs ${with[-1]} s"
done
# Both datasets for the loader (the last pack removed one of them).
[[ -f $work/out-alone/manifest.json ]] || $bin/shardpack pack "$src" "$work/out-alone" --no-sync --quiet
[[ -f $work/out-pairs/manifest.json ]] || $bin/shardpack pack "$pairs" "$work/out-pairs" --no-sync --quiet
for ((r = 1; r <= (runs + 1) / 2; r++)); do
  if ((r % 2)); then
    load_alone+=("$(rate_of "$work/out-alone")")
    load_with+=("$(rate_of "$work/out-pairs" --fields txt)")
  else
    load_with+=("$(rate_of "$work/out-pairs" --fields txt)")
    load_alone+=("$(rate_of "$work/out-alone")")
  fi
  echo "load $r: images only ${load_alone[-1]} images/s, with captions ${load_with[-1]} images/s"
done
ta=$(median "${alone[@]}") tw=$(median "${with[@]}")
# The fastest run of each: the least disturbed by the host (single runs scatter by 2-3x here, and a
# median of runs that are mostly disturbed says more about the host than about the pack).
ba=$(printf '%s\n' "${alone[@]}" | sort -g | head -1) bw=$(printf '%s\n' "${with[@]}" | sort -g | head -1)
la=$(median "${load_alone[@]}") lw=$(median "${load_with[@]}")
awk -v n="$images" -v ta="$ta" -v tw="$tw" -v ba="$ba" -v bw="$bw" -v la="$la" -v lw="$lw" -v cores="$(nproc)" 'BEGIN {
  printf "cores: %d, %d images\n", cores, n
  printf "pack images alone        %6.2f s  %7.0f images/s\n", ta, n / ta
  printf "pack image-caption pairs %6.2f s  %7.0f samples/s\n", tw, n / tw
  printf "ratio pairs / images alone (throughput): %.3f (medians), %.3f (fastest runs: %.2f s, %.2f s)\n", ta / tw, ba / bw, ba, bw
  printf "load images only         %7.0f images/s\n", la
  printf "load with fields=txt     %7.0f images/s\n", lw
  printf "ratio with captions / images only (throughput): %.3f\n", lw / la
}'

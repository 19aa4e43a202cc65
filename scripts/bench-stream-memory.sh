#!/usr/bin/env bash
# Streaming memory: a dataset streamed over HTTP without a cache folder, under the streaming
# shuffle, holds the shards being read and prefetched plus the shuffle buffer's samples, whatever
# the dataset's size (docs/remote.md, "Memory of streaming mode"). nginx on 127.0.0.1 serves
# WebDataset shards packed from a tree of 400 JPEGs of about 300 KB (scripts/bench-tree.sh)
# repeated by hard links: shards of 256 MB read with a buffer of 100 samples, and of 32 MB with
# 1,000, each at two dataset sizes 4x apart. For each: the peak memory (RSS plus in-memory files:
# scripts/peak_memory.py) of one epoch of `shardpack bench URL --shuffle-buffer K`, of the same
# read of the local folder (the loader's own memory), and the documented bound
#   local peak + (3 + prefetch_shards + 1) x largest shard + K x largest sample.
#
#   scripts/bench-stream-memory.sh [--work DIR] [--bin DIR] [--quick] [--case "COPIES SIZE BUFFER [PREFETCH]"]
# --quick: the 32 MB case only, at 600 MB and 2.4 GB. --case: that case alone (the tree repeated
# COPIES times, shards of SIZE, a buffer of BUFFER, --prefetch-shards PREFETCH, 0 for the default).
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
work=build/bench bin=build/release quick=0 only=
while (($#)); do
  case $1 in
    --work) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --case) only=$2; shift 2 ;;
    *) echo "usage: $0 [--work DIR] [--bin DIR] [--quick] [--case \"COPIES SIZE BUFFER [PREFETCH]\"]" >&2; exit 2 ;;
  esac
done
mkdir -p "$work"
work=$(realpath "$work")
base=$work/stream-base-400
scripts/bench-tree.sh "$bin" "$base" --classes 10 --images 400 --scale 2 --png-every 0
serve=$work/stream-serve
mkdir -p "$serve"

# The tree repeated N times (hard links: no more disk), packed into shards of SIZE; once.
dataset() {
  local copies=$1 size=$2 name=$serve/ds-$1x-$2
  if [[ ! -f $name/manifest.json ]]; then
    local tree=$work/stream-tree-$copies
    if [[ ! -f $tree/.complete ]]; then
      rm -rf "$tree"
      "$py" - "$base" "$tree" "$copies" <<'PY'
import os, sys
base, tree, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
for d in sorted(os.listdir(base)):
    if not os.path.isdir(os.path.join(base, d)):
        continue
    os.makedirs(os.path.join(tree, d))
    for c in range(copies):
        for f in sorted(os.listdir(os.path.join(base, d))):
            os.link(os.path.join(base, d, f), os.path.join(tree, d, f"{c}-{f}"))
PY
      touch "$tree/.complete"
    fi
    rm -rf "$name"
    "$bin/shardpack" pack "$tree" "$name" --shard-size "$size" --quiet --no-sync >/dev/null
  fi
  echo "$name"
}

# shellcheck source=scripts/nginx-serve.sh
source scripts/nginx-serve.sh
trap stop_nginx EXIT
start_nginx "$serve"

# Peak memory in KB of one epoch of `shardpack bench SOURCE --shuffle-buffer K --prefetch-shards P`,
# without a cache.
peak() {
  local source=$1 k=$2 p=$3
  env -u SHARDPACK_CACHE scripts/peak_memory.py -o "$nginx_dir/peak" "$bin/shardpack" bench "$source" --epochs 1 \
    --crop 64 --batch 64 --threads 2 --shuffle-buffer "$k" --prefetch-shards "$p" --json >/dev/null
  cat "$nginx_dir/peak"
}

cases=("5 32MB 1000 0" "20 32MB 1000 0")
((quick)) || cases+=("20 256MB 100 0" "80 256MB 100 0")
[[ -n $only ]] && cases=("$only")
printf '%-26s %8s %7s %10s %10s %10s %s\n' dataset shards buffer "local MB" "streamed MB" "bound MB" within
for c in "${cases[@]}"; do
  read -r copies size k p <<<"$c"
  p=${p:-0}
  ds=$(dataset "$copies" "$size")
  read -r shards largest sample bytes < <("$py" - "$ds" <<'PY'
import json, os, sys, tarfile
ds = sys.argv[1]
m = json.load(open(os.path.join(ds, "manifest.json")))
shards = m["shardlist"]  # the manifest's shard list (docs/formats/manifest.md)
largest = max(s["filesize"] for s in shards)
sample = 0
with tarfile.open(os.path.join(ds, shards[0]["url"])) as t:
    sizes = {}
    for member in t:
        stem = member.name.split(".")[0]
        sizes[stem] = sizes.get(stem, 0) + member.size + 512
    sample = max(sizes.values())
# Every copy of the tree holds the same images: the first shard's largest sample is the largest.
print(len(shards), largest, sample, sum(s["filesize"] for s in shards))
PY
)
  # The prefetch window the reader takes by default when streaming: twice 4 downloads, within 1 GiB.
  prefetch=$(( (1 << 30) / largest )); ((prefetch < 1)) && prefetch=1; ((prefetch > 8)) && prefetch=8
  ((p > 0)) && prefetch=$p
  local_kb=$(peak "$ds" "$k" "$p")
  stream_kb=$(peak "$url/$(basename "$ds")" "$k" "$p")
  bound_kb=$(( local_kb + ((3 + prefetch + 1) * largest + k * sample) / 1024 ))
  within=no
  ((stream_kb <= bound_kb)) && within=yes
  printf '%-26s %8s %7s %10d %10d %10d %s\n' "$(basename "$ds") ($((bytes / 1000000)) MB)" "$shards" "$k" \
    $((local_kb / 1024)) $((stream_kb / 1024)) $((bound_kb / 1024)) "$within (prefetch $prefetch)"
done

#!/usr/bin/env bash
# The shared cache's bookkeeping (issue 39): one cold epoch of a Python loader (streaming shuffle,
# one rank) over S one-sample shards served by nginx on 127.0.0.1, into a fresh cache folder with a
# cache_limit it never reaches against one without a limit, alternating, R runs each; prints each
# run and the ratio of the medians. A limit makes every download a decision under the folder's
# lock: its cost per download must not grow with the dataset's shard count.
#
#   scripts/bench-cache-bookkeeping.sh [--shards S] [--runs R] [--work DIR] [--bin DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
shards=1500 runs=3 work=build/bench bin=build/release
while (($#)); do
  case $1 in
    --shards) shards=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "usage: $0 [--shards S] [--runs R] [--work DIR] [--bin DIR]" >&2; exit 2 ;;
  esac
done
mkdir -p "$work"
work=$(realpath "$work")
tree=$work/bookkeeping-tree-$shards
scripts/bench-tree.sh "$bin" "$tree" --classes 10 --images "$shards" --small
serve=$work/bookkeeping-serve-$shards
if [[ ! -f $serve/ds/manifest.json ]]; then
  rm -rf "$serve"
  "$bin/shardpack" pack "$tree" "$serve/ds" --samples-per-shard 1 --quiet --no-sync >/dev/null
fi
caches=$work/bookkeeping-caches
# shellcheck source=scripts/nginx-serve.sh
source scripts/nginx-serve.sh
trap 'stop_nginx; rm -rf "$caches"' EXIT
start_nginx "$serve"
PYTHONPATH=$bin/python PYTHONDONTWRITEBYTECODE=1 "$py" - "$url/ds" "$caches" "$runs" <<'PY'
import shutil, statistics, sys, time
import shardpack

url, caches, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])


def epoch(limit):
    shutil.rmtree(caches, ignore_errors=True)
    start = time.perf_counter()
    loader = shardpack.Loader(url, batch_size=16, size=16, threads=2, shuffle_buffer=64, cache_dir=caches,
                              cache_limit=limit)
    images = sum(len(labels) for _, labels in loader)
    return time.perf_counter() - start, images


times = {"no limit": [], "limit never reached": []}
for run in range(runs):
    for name, limit in (("no limit", 0), ("limit never reached", 1 << 40)):
        seconds, images = epoch(limit)
        times[name].append(seconds)
        print(f"run {run + 1}: {name}: {images} images in {seconds:.2f} s")
free, limited = statistics.median(times["no limit"]), statistics.median(times["limit never reached"])
print(f"medians of {runs}: no limit {free:.2f} s, a limit never reached {limited:.2f} s: {limited / free:.2f}x")
PY

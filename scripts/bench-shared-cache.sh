#!/usr/bin/env bash
# The ranks of a node on one cache folder (docs/remote.md, "One cache folder for a node"): 2, 4 and
# 8 Python loader processes (rank r of N, threads=1, streaming shuffle with a buffer of 500, two
# epochs; in lockstep as training steps keep them, and running free) read one dataset from nginx on
# 127.0.0.1 through one folder whose cache_limit is a quarter of the dataset, the folder's size
# sampled every 50 ms and the shard downloads counted (scripts/shared_cache_ranks.py);
# then without a limit under a global shuffle, counting nginx's shard requests; every rank's
# batches against the same rank's read of the local folder; and the images/s of 4 ranks on one
# shared cache against 4 ranks on private caches (each its own folder and the same limit), medians
# of R runs from cold caches. The dataset: 2,000 JPEGs of about 110 KB (scripts/bench-tree.sh) in
# shards of 8 MB.
#
#   scripts/bench-shared-cache.sh [--work DIR] [--bin DIR] [--runs R]
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
work=build/bench bin=build/release runs=5
while (($#)); do
  case $1 in
    --work) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: $0 [--work DIR] [--bin DIR] [--runs R]" >&2; exit 2 ;;
  esac
done
mkdir -p "$work"
work=$(realpath "$work")
tree=$work/shared-tree-2000
scripts/bench-tree.sh "$bin" "$tree" --classes 10 --images 2000
serve=$work/shared-serve
if [[ ! -f $serve/ds/manifest.json ]]; then
  rm -rf "$serve"
  "$bin/shardpack" pack "$tree" "$serve/ds" --shard-size 8MB --quiet --no-sync >/dev/null
fi
caches=$work/shared-caches
# shellcheck source=scripts/nginx-serve.sh
source scripts/nginx-serve.sh
trap 'stop_nginx; rm -rf "$caches"' EXIT
NGINX_ACCESS_LOG=$work/shared-access.log
rm -f "$NGINX_ACCESS_LOG"
export NGINX_ACCESS_LOG
start_nginx "$serve"

PYTHONDONTWRITEBYTECODE=1 "$py" - "$serve/ds" "$url/ds" "$caches" "$bin/python" "$runs" \
  "$NGINX_ACCESS_LOG" <<'PY'
import json, os, shutil, statistics, sys
sys.path.insert(0, "scripts")
from shared_cache_ranks import run_ranks

local, url, caches, python_dir, runs, log = sys.argv[1:7]
runs = int(runs)
shards = json.load(open(os.path.join(local, "manifest.json")))["shardlist"]
total, largest = sum(s["filesize"] for s in shards), max(s["filesize"] for s in shards)
limit, buffer = total // 4, 500
print(f"dataset: {len(shards)} shards, {total / 1e6:.0f} MB (largest {largest / 1e6:.1f} MB); "
      f"limit {limit / 1e6:.0f} MB, shuffle_buffer {buffer}")


def fresh(*names):
    shutil.rmtree(caches, ignore_errors=True)
    return [os.path.join(caches, n) for n in names]


def requests():
    return [line.split('"GET /ds/')[1].split(" ")[0] for line in open(log) if '"GET /ds/shard-' in line
            and ".tar " in line]


for world in (2, 4, 8):
    expected = run_ranks(local, world, None, 0, buffer, 2, python_dir)["digests"]
    # In lockstep (every rank waits for the others after each batch, as a training step's all-reduce
    # makes it), and running free (ranks drift apart on a busy machine: what no small cache serves).
    for lockstep in (True, False):
        before = len(requests())
        r = run_ranks(url, world, fresh("shared") * world, limit, buffer, 2, python_dir, lockstep=lockstep)
        n = len(requests()) - before
        print(f"{world} ranks, one folder, limit a quarter, {'in lockstep' if lockstep else 'running free'}: "
              f"peak {r['peak'] / 1e6:.1f} MB = {r['peak'] / limit:.2f}x the limit (bound: limit + {world} shards "
              f"= {(limit + world * largest) / limit:.2f}x); {n} shard downloads for {len(shards)} shards x 2 "
              f"epochs ({n / (2 * len(shards)):.2f}x); batches equal the local read: {r['digests'] == expected}")
    expected = run_ranks(local, world, None, 0, 0, 2, python_dir)["digests"]
    before = len(requests())
    r = run_ranks(url, world, fresh("shared") * world, 0, 0, 2, python_dir)
    got = requests()[before:]
    print(f"{world} ranks, one folder, no limit, global shuffle: {len(got)} shard downloads for {len(shards)} "
          f"shards ({len(set(got))} distinct); batches equal the local read: {r['digests'] == expected}")

# Checking a cache: `shardpack stat URL` over a warm cache (every shard in it), with the records of
# the checks, without them (every shard hashed), and 8 processes at once without them (each shard
# hashed once, by the process that holds its fetch lock). Medians of R.
import subprocess, time
shardpack = os.path.join(os.path.dirname(python_dir), "shardpack")
cache = fresh("check")[0]
env = dict(os.environ, SHARDPACK_CACHE=cache)
subprocess.run([shardpack, "stat", url], env=env, check=True, stdout=subprocess.DEVNULL)


def drop_records():
    for root, _, files in os.walk(cache):
        for f in files:
            if f.endswith(".checked"):
                os.remove(os.path.join(root, f))


def timed(n, drop):
    if drop:
        drop_records()
    start = time.time()
    procs = [subprocess.Popen([shardpack, "stat", url], env=env, stdout=subprocess.DEVNULL) for _ in range(n)]
    if any(p.wait() != 0 for p in procs):
        raise SystemExit("stat failed")
    return time.time() - start


with_records = statistics.median(timed(1, False) for _ in range(runs))
without = statistics.median(timed(1, True) for _ in range(runs))
eight = statistics.median(timed(8, True) for _ in range(runs))
eight_with = statistics.median(timed(8, False) for _ in range(runs))
print(f"checking a warm cache of {total / 1e6:.0f} MB ({len(shards)} shards), shardpack stat URL: with records "
      f"{with_records:.3f} s, without (each shard hashed) {without:.3f} s; 8 processes at once: with records "
      f"{eight_with:.3f} s, without {eight:.3f} s")

rates = {"shared": [], "private": []}
for i in range(runs):
    for kind in ("shared", "private"):
        folders = fresh("shared") * 4 if kind == "shared" else fresh("p0", "p1", "p2", "p3")
        r = run_ranks(url, 4, folders, limit, buffer, 2, python_dir)
        rates[kind].append(r["images"] / r["seconds"])
    print(f"run {i + 1}: shared {rates['shared'][-1]:.0f} images/s, private {rates['private'][-1]:.0f} images/s")
shared, private = statistics.median(rates["shared"]), statistics.median(rates["private"])
print(f"4 ranks, medians of {runs}: one shared cache {shared:.0f} images/s, private caches {private:.0f} images/s: "
      f"{shared / private:.3f}x")
PY

#!/usr/bin/env bash
# The training path against baselines measured in the same run, on the same generated data:
#  (a) raw shards into batches (eval, no transform needed) against numpy copying the same bytes
#      (a plain memcpy);
#  (b) JPEG WebDataset shards with random-resized-crop 224 + flip on 2 threads against PyTorch's
#      DataLoader with PIL and torchvision doing the same with 2 workers;
#  (c) the Python loader (shardpack.Loader, torch tensors) against the C++ loader (`shardpack bench`)
#      with the same options as (b): the binding's overhead;
# plus decode-only images/s per core as the ceiling, and (scripts/bench-remote.sh) the loader over
# HTTP from nginx on loopback against local disk. Every loader in (b) and (c) is timed the same
# way: from opening the dataset (shardpack's indexes; the DataLoader's folder listing and worker
# processes) to the last batch of one epoch.
#
#   scripts/bench-read.sh [--images N] [--runs R] [--work DIR] [--bin DIR]
#
# --bin DIR: measure the build in DIR instead of building build/release (an older build, to compare
# before and after a change); (c) needs DIR/python and is skipped without it.
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
images=4000 runs=3 work=build/bench bin=
while (($#)); do
  case $1 in
    --images) images=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "usage: $0 [--images N] [--runs R] [--work DIR] [--bin DIR]" >&2; exit 2 ;;
  esac
done
scripts/install-deps.sh
if [[ -z $bin ]]; then
  scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release
  bin=build/release
fi
src=$work/read-tree-$images
scripts/bench-tree.sh "$bin" "$src" --classes 100 --images "$images" --png-every 0 --noise 46
rm -rf "$work/read-wds" "$work/read-raw"
$bin/shardpack pack "$src" "$work/read-wds" --shuffle --quiet --no-sync >/dev/null
$bin/shardpack pack "$src" "$work/read-raw" --format raw --resize 256 --crop 224 --quiet --no-sync >/dev/null
cat "$work"/read-wds/*.tar "$work"/read-raw/*.npy >/dev/null
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
json() { "$py" -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
# images/s including the open, as the baselines are timed (open_seconds: 0 from builds before it).
with_open() {
  "$py" -c "import json,sys; r=json.load(sys.stdin); print(r['images'] / (r['seconds'] + r.get('open_seconds', 0)))"
}

raw_bps=() copy_bps=() wds_ips=() torch_ips=() py_ips=()
for ((r = 1; r <= runs; r++)); do
  raw_bps+=("$($bin/shardpack bench "$work/read-raw" --eval --crop 224 --batch 64 --threads 2 --json | json bytes_per_s)")
  copy_bps+=("$("$py" - "$work/read-raw" <<'PY'
import glob, sys, time
import numpy as np
shards = [np.load(p, mmap_mode="r") for p in sorted(glob.glob(sys.argv[1] + "/*.npy")) if ".labels." not in p]
out = np.empty((64,) + shards[0].shape[1:], np.uint8)
t, n = time.time(), 0
for s in shards:
    for i in range(0, len(s), 64):
        b = s[i:i + 64]
        np.copyto(out[:len(b)], b)
        n += b.nbytes
print(n / (time.time() - t))
PY
)")
  wds_ips+=("$($bin/shardpack bench "$work/read-wds" --crop 224 --batch 64 --threads 2 --json | with_open)")
  torch_ips+=("$("$py" scripts/bench_torch_baseline.py "$src" 224 64 2 "$images" | awk '{print $3}')")
  if [[ -d $bin/python ]]; then
    py_ips+=("$(PYTHONPATH=$bin/python "$py" scripts/bench_python_loader.py "$work/read-wds" 224 64 2 | awk '{print $2}')")
  else
    py_ips+=(0)
  fi
  echo "run $r: raw ${raw_bps[-1]} B/s, copy ${copy_bps[-1]} B/s, wds ${wds_ips[-1]} images/s, torch ${torch_ips[-1]} images/s, python ${py_ips[-1]} images/s"
done
awk -v rb="$(median "${raw_bps[@]}")" -v cb="$(median "${copy_bps[@]}")" -v wi="$(median "${wds_ips[@]}")" \
    -v ti="$(median "${torch_ips[@]}")" -v pi="$(median "${py_ips[@]}")" 'BEGIN {
  printf "(a) raw shards into batches  %8.1f MB/s; memcpy (numpy) of the same bytes %8.1f MB/s; ratio %.2f\n", rb / 1e6, cb / 1e6, rb / cb
  printf "(b) wds + random-resized-crop 224, 2 threads %6.0f images/s; PyTorch DataLoader + PIL, 2 workers %6.0f images/s; ratio %.2f\n", wi, ti, wi / ti
  printf "(c) the same through shardpack.Loader in Python %6.0f images/s; C++ loader %6.0f images/s; ratio %.3f\n", pi, wi, pi / wi
}'
echo "ceiling, JPEG decode per core (500x375, ~110 KB):"
$bin/bench/shardpack_micro_bench --benchmark_filter='AtScale/8/0' 2>/dev/null | grep BM_ || true
# The same loader over HTTP (nginx on loopback) against local disk.
if [[ -x /usr/sbin/nginx ]]; then
  scripts/bench-remote.sh --src "$src" --work "$work" --runs "$runs" --bin "$bin"
fi

#!/usr/bin/env bash
# Packing straight into an S3-protocol store against what a user does without it: pack into a local
# folder, then upload it with `aws s3 cp --recursive` (awscli, its default 10 concurrent requests).
# Both against moto's S3 server (PyPI, build/venv) on 127.0.0.1, started here and always stopped
# (objects in its memory; moto is the bound here, not shardpack); medians of R runs, in
# alternating order. Also the pack into a local folder alone, and the staging folder's peak size
# (sampled every 50 ms) against the dataset's.
#
#   scripts/bench-s3-output.sh [--src TREE] [--runs R] [--work DIR] [--bin DIR]
#
# TREE defaults to the 4,000-image tree of scripts/bench-remote.sh (build/bench/read-tree-4000),
# generated here when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
src=build/bench/read-tree-4000 runs=3 work=build/bench/s3-output bin=build/release
while (($#)); do
  case $1 in
    --src) src=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "usage: $0 [--src TREE] [--runs R] [--work DIR] [--bin DIR]" >&2; exit 2 ;;
  esac
done
scripts/install-deps.sh
scripts/bench-tree.sh "$bin" "$src" --classes 100 --images 4000 --png-every 0 --noise 46
rm -rf "$work"
mkdir -p "$work/staging"
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$py" -m moto.server -H 127.0.0.1 -p "$port" >"$work/moto.log" 2>&1 &
store_pid=$!
trap 'kill $store_pid 2>/dev/null; wait $store_pid 2>/dev/null || true' EXIT
for _ in $(seq 300); do (echo >/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
export AWS_ACCESS_KEY_ID=MOTO AWS_SECRET_ACCESS_KEY=MOTO AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
export AWS_ENDPOINT_URL=http://127.0.0.1:$port AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export SHARDPACK_STAGING=$work/staging
aws() { "$PWD/build/venv/bin/aws" --endpoint-url "$AWS_ENDPOINT_URL" "$@"; }
aws s3api create-bucket --bucket bench >/dev/null
cat "$src"/*/* >/dev/null  # the page cache holds the tree for every contender
flags=(--samples-per-shard 500 --quiet --no-sync)  # 8 shards of about 55 MB

now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
direct=() two_step=() local_only=() peak=0
for ((r = 1; r <= runs; r++)); do
  aws s3 rm --recursive --only-show-errors "s3://bench/" || true
  rm -rf "$work/local"
  # Straight into the store, the staging folder sampled while it runs.
  t0=$(now)
  "$bin/shardpack" pack "$src" "s3://bench/direct-$r" "${flags[@]}" &
  pack_pid=$!
  while kill -0 $pack_pid 2>/dev/null; do
    kb=$(du -sk "$work/staging" | cut -f1)
    ((kb > peak)) && peak=$kb
    sleep 0.05
  done
  wait $pack_pid
  t1=$(now)
  # Into a local folder, then uploaded.
  "$bin/shardpack" pack "$src" "$work/local" "${flags[@]}"
  t2=$(now)
  aws s3 cp --recursive --only-show-errors "$work/local" "s3://bench/two-step-$r"
  t3=$(now)
  direct+=("$(echo "$t1 - $t0" | bc)") local_only+=("$(echo "$t2 - $t1" | bc)") two_step+=("$(echo "$t3 - $t1" | bc)")
  echo "run $r: pack into s3:// ${direct[-1]} s; pack into a folder ${local_only[-1]} s, + aws s3 cp ${two_step[-1]} s"
done
bytes=$(du -sb "$work/local" | cut -f1)
awk -v d="$(median "${direct[@]}")" -v t="$(median "${two_step[@]}")" -v l="$(median "${local_only[@]}")" \
    -v b="$bytes" -v peak="$peak" 'BEGIN {
  printf "dataset: %.1f MB in 8 shards\n", b / 1e6
  printf "pack into s3://             %6.2f s  %6.1f MB/s\n", d, b / d / 1e6
  printf "pack into a folder          %6.2f s  %6.1f MB/s\n", l, b / l / 1e6
  printf "pack + aws s3 cp --recursive %5.2f s  %6.1f MB/s\n", t, b / t / 1e6
  printf "ratio two-step / direct (time): %.2f\n", t / d
  printf "staging folder peak: %.1f MB (%.0f%% of the dataset)\n", peak / 1024, peak * 1024 * 100 / b
}'

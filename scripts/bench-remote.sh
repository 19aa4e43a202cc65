#!/usr/bin/env bash
# The training loader over HTTP against the same datasets on local disk, measured in the same run:
# nginx on 127.0.0.1 (loopback) serves datasets packed from the tree scripts/bench-read.sh made (it
# runs this at its end) in shards of 32 MB, as a dataset of many shards is. JPEG WebDataset with
# random-resized-crop 224 on 2 threads: images/s with a global shuffle from a cold cache (shards
# downloaded as the epoch goes) and from a warm one, against local; with the streaming shuffle
# (--shuffle-buffer 1000) streamed without a cache, against local with the same shuffle. Raw
# shards (no decode): MB/s the same ways. Every figure includes opening the dataset; medians of R
# runs; peak memory of each (RSS plus the in-memory files streamed shards are kept in:
# scripts/peak_memory.py).
#
#   scripts/bench-remote.sh --src TREE [--work DIR] [--runs R] [--bin DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
work=build/bench runs=3 bin=build/release src=
while (($#)); do
  case $1 in
    --src) src=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "usage: $0 --src TREE [--work DIR] [--runs R] [--bin DIR]" >&2; exit 2 ;;
  esac
done
[[ -d $src ]] || { echo "$0: --src TREE: an image tree (scripts/bench-read.sh makes one)" >&2; exit 2; }
mkdir -p "$work"
work=$(realpath "$work")
rm -rf "$work/remote-wds" "$work/remote-raw"
$bin/shardpack pack "$src" "$work/remote-wds" --shuffle --shard-size 32MB --quiet --no-sync >/dev/null
$bin/shardpack pack "$src" "$work/remote-raw" --format raw --resize 256 --crop 224 --shard-size 32MB --quiet \
  --no-sync >/dev/null

# shellcheck source=scripts/nginx-serve.sh
source scripts/nginx-serve.sh
trap 'stop_nginx; rm -rf "$work/remote-cache"' EXIT
start_nginx "$work"
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# `shardpack bench` under scripts/peak_memory.py: prints "<rate including the open> <peak memory in
# KB>", the rate being images/s or bytes/s (FIELD images or bytes). CACHE: the cache folder, or - for
# none.
bench() {
  local field=$1 cache=$2
  shift 2
  [[ $cache == - ]] && cache=
  SHARDPACK_CACHE=$cache scripts/peak_memory.py -o "$nginx_dir/rss" "$bin/shardpack" bench "$@" --json |
    "$py" -c "import json,sys; r=json.load(sys.stdin); n = r['images'] if '$field' == 'images' else r['bytes_per_s'] * r['seconds']; print(n / (r['seconds'] + r['open_seconds']))" |
    tr '\n' ' '
  cat "$nginx_dir/rss"
}
declare -A rate rss
cache=$work/remote-cache
for kind in wds raw; do
  if [[ $kind == wds ]]; then args=(--crop 224 --batch 64 --threads 2) field=images; else
    args=(--eval --crop 224 --batch 64 --threads 2) field=bytes; fi
  stream=(--shuffle-buffer 1000)
  declare -A runs_of=()
  for ((r = 1; r <= runs; r++)); do
    rm -rf "$cache"
    line="run $r ($kind):"
    for mode in local cold warm local-stream stream; do
      case $mode in
        local) read -r v m < <(bench $field - "$work/remote-$kind" "${args[@]}") ;;
        cold | warm) read -r v m < <(bench $field "$cache" "$url/remote-$kind" "${args[@]}") ;;
        local-stream) read -r v m < <(bench $field - "$work/remote-$kind" "${args[@]}" "${stream[@]}") ;;
        stream) read -r v m < <(bench $field - "$url/remote-$kind" "${args[@]}" "${stream[@]}") ;;
      esac
      runs_of[$mode]+="$v " runs_of[$mode-rss]+="$m "
      line+=" $mode $v"
    done
    echo "$line"
  done
  for mode in local cold warm local-stream stream; do
    # shellcheck disable=SC2086
    rate[$kind-$mode]=$(median ${runs_of[$mode]}) rss[$kind-$mode]=$(median ${runs_of[$mode-rss]})
  done
  unset runs_of
done
rm -rf "$cache"
for kind in wds raw; do
  if [[ $kind == wds ]]; then unit=images/s scale=1; else unit=MB/s scale=1e6; fi
  awk -v k=$kind -v u=$unit -v s=$scale -v l="${rate[$kind-local]}" -v c="${rate[$kind-cold]}" -v w="${rate[$kind-warm]}" \
      -v ls="${rate[$kind-local-stream]}" -v st="${rate[$kind-stream]}" \
      -v ml="${rss[$kind-local]}" -v mc="${rss[$kind-cold]}" -v mw="${rss[$kind-warm]}" \
      -v mls="${rss[$kind-local-stream]}" -v ms="${rss[$kind-stream]}" 'BEGIN {
    what = k == "wds" ? "wds + random-resized-crop 224, 2 threads" : "raw shards into batches"
    printf "%s, global shuffle: local %.0f %s; over HTTP, cold cache %.0f (%.2fx), warm cache %.0f (%.2fx)\n", what, l / s, u, c / s, c / l, w / s, w / l
    printf "%s, streaming shuffle: local %.0f %s; over HTTP streamed without a cache %.0f (%.2fx)\n", what, ls / s, u, st / s, st / ls
    printf "  peak memory, RSS + in-memory shards (MB): local %.0f, cold %.0f, warm %.0f, local streaming %.0f, streamed %.0f\n", ml / 1024, mc / 1024, mw / 1024, mls / 1024, ms / 1024
  }'
done
